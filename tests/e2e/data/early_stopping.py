"""Early stopping and a best checkpoint on the epoch's mean training loss: per rank, each rank
would decide on its own shard's loss, and a rank that stops while the other trains on hangs it
(DDP's all-reduce waits). Converted, the mean is averaged over the ranks where it is computed,
so both ranks stop at the same epoch and rank 0 saves the best model."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best, bad = float("inf"), 0
for epoch in range(30):
    total = 0.0
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    epoch_loss = total / len(loader)
    if epoch_loss < best - 1e-3:
        best, bad = epoch_loss, 0
        torch.save(model.state_dict(), "best.pt")
    else:
        bad += 1
        if bad >= 2:
            print("stopped at epoch", epoch, flush=True)
            break
