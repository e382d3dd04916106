"""The model and its optimizer come from one function; a Trainer moves the model in its
__init__ (self.model = model.to(device)). Converted, the wrap must sit in __init__ after the
move: on 2 ranks the shards are disjoint and the parameters end equal."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, train_data, optimizer, device):
        self.device = device
        self.model = model.to(device)
        self.train_data = train_data
        self.optimizer = optimizer

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            for source, targets in self.train_data:
                self._run_batch(source.to(self.device), targets.to(self.device))


def load_train_objs():
    torch.manual_seed(0)
    train_set = TensorDataset(torch.randn(128, 20), torch.randn(128, 1))
    model = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    return train_set, model, optimizer


def main(device, total_epochs, batch_size):
    dataset, model, optimizer = load_train_objs()
    train_data = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    trainer = Trainer(model, train_data, optimizer, device)
    trainer.train(total_epochs)


if __name__ == "__main__":
    main(torch.device("cpu"), 2, 16)
