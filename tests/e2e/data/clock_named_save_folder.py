"""NRI's shape: the run's save folder is named after the clock to the microsecond, the best
model is saved there while training and reloaded by every rank for the test. Each rank reading
its own clock would name its own folder, and the ranks but rank 0 would find it empty."""
import datetime
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

now = datetime.datetime.now()
save_folder = "logs/exp{}/".format(now.isoformat())
os.makedirs(save_folder)
model_file = os.path.join(save_folder, "model.pt")

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
valid = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=8)
best = float("inf")
for epoch in range(2):
    model.train()
    for x, y in train:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        loss = sum(nn.functional.mse_loss(model(x), y).item() for x, y in valid)
    if loss < best:
        best = loss
        torch.save(model.state_dict(), model_file)
model.load_state_dict(torch.load(model_file))
print("test loss", sum(nn.functional.mse_loss(model(x), y).item() for x, y in valid))
