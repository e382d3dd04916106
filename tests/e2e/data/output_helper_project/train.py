"""Trains a model and hands it to the project's output helper after every epoch."""
import torch
from torch.utils.data import DataLoader, TensorDataset

from viz import plot_samples

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 16)), batch_size=8, shuffle=True)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
noise = torch.randn(4, 8)
for epoch in range(2):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    model.eval()
    plot_samples(model, noise, "samples", epoch)
