"""A model built in main() and handed to Trainer.train(), which builds the optimizer; the
trainer's standard_train / adversarial_train only forward their model to train() and nothing
calls them (pytorch-adversarial-training's mnist/main.py)."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, lr):
        self.lr = lr

    def standard_train(self, model, loader):
        self.train(model, loader, False)

    def adversarial_train(self, model, loader):
        self.train(model, loader, True)

    def train(self, model, loader, adv_train=False):
        opt = torch.optim.Adam(model.parameters(), self.lr)
        for epoch in range(2):
            for x, y in loader:
                if adv_train:
                    x = x + 0.01 * torch.randn_like(x)
                loss = nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"epoch {epoch}: {loss.item():.3f}")
        torch.save(model.state_dict(), "model.pt")


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    if torch.cuda.is_available():
        model.cuda()
    trainer = Trainer(1e-3)
    data = TensorDataset(torch.randn(128, 8), torch.randint(0, 4, (128,)))
    loader = DataLoader(data, batch_size=16, shuffle=True)
    trainer.train(model, loader)


if __name__ == "__main__":
    main()
