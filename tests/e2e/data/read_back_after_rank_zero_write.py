"""A sample grid saved each epoch, then read back to log a statistic of it (AnoGAN: save_image,
then Image.open for wandb): once rank 0 alone writes the file, the other ranks read it after
a barrier, never before it exists."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 8))
loader = DataLoader(data, batch_size=8, shuffle=True)
G = nn.Linear(8, 16)
optimizer = torch.optim.SGD(G.parameters(), lr=0.05)
fixed = torch.randn(4, 8)
for epoch in range(2):
    for (x,) in loader:
        optimizer.zero_grad()
        G(x).pow(2).mean().backward()
        optimizer.step()
    samples = G(fixed).detach().numpy()
    np.save(f"samples_{epoch}.npy", samples)
    grid = np.load(f"samples_{epoch}.npy")
    print(f"epoch {epoch} grid mean {grid.mean():.4f}")
