"""Issue 20, class 5: the loader is built anew inside the epoch loop."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
for epoch in range(3):
    loader = DataLoader(data, batch_size=8, shuffle=True)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
torch.save(model.state_dict(), "model.pt")
