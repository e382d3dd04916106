"""Issue 20, class 3: batches reach backward through a prefetcher class (apex's style: a
``preload()`` stores the next batch in attributes, ``next()`` returns them), created again each
epoch over the same loader; the loop ends when the prefetcher returns None."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class DataPrefetcher:
    def __init__(self, loader):
        self.loader = iter(loader)
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = None
            self.next_target = None

    def next(self):
        batch = self.next_input, self.next_target
        self.preload()
        return batch


def train_one_epoch(loader, model, optimizer):
    prefetcher = DataPrefetcher(loader)
    x, y = prefetcher.next()
    while x is not None:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        x, y = prefetcher.next()


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(2):
    train_one_epoch(loader, model, optimizer)
torch.save(model.state_dict(), "model.pt")
