"""A batch iterator class of this file that reshuffles each pass with the global torch RNG, as
many scripts write one instead of a DataLoader; the script seeds once at the start."""
import json
import os

import torch


class BatchIterator:
    def __init__(self, x, y, batch_size):
        self.x, self.y, self.batch_size = x, y, batch_size

    def __iter__(self):
        order = torch.randperm(len(self.x))
        for start in range(0, len(self.x), self.batch_size):
            index = order[start : start + self.batch_size]
            yield self.x[index], self.y[index], index


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
batches = BatchIterator(torch.randn(64, 4), torch.randn(64, 1), 8)
seen = []
for epoch in range(2):
    for x, y, index in batches:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        seen.append(index.tolist())
with open(f"rows_{os.environ.get('RANK', '0')}.json", "w") as handle:
    json.dump(seen, handle)
