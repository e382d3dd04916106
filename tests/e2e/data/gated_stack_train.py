"""Trains the project's GatedStack (gated_layers.py): its forward drops the last layer's vertical
output, so DDP without find_unused_parameters=True stops at the second iteration."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from gated_layers import GatedStack

torch.manual_seed(0)
model = GatedStack(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,))), batch_size=16, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
