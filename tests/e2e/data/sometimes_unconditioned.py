"""Classifier-free-guidance style training: the condition is dropped on random steps, and the
model then skips its label embedding (those parameters get no gradient in that step)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Conditioned(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.label_emb = nn.Embedding(10, 8)

    def forward(self, x, labels=None):
        if labels is not None:
            x = x + self.label_emb(labels)
        return self.body(x)


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 8), torch.randint(0, 10, (64,)))
    loader = DataLoader(data, batch_size=16, shuffle=True)
    net = Conditioned()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(2):
        for x, y in loader:
            cond = y
            if torch.rand(()) < 0.5:
                cond = None
            loss = net(x, cond).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print("done")


if __name__ == "__main__":
    main()
