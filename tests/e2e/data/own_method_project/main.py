"""Trains a flow of a sibling module through model.log_probs(x): the loss never calls the
model's forward directly."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import flows as fnn

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, shuffle=True)
model = fnn.FlowSequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    for (x,) in loader:
        optimizer.zero_grad()
        loss = -model.log_probs(x).mean()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
torch.save(model.state_dict(), "flow.pt")
