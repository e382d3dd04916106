"""A generator with BatchNorm trained on a regression target; every other step it draws samples
for its log, under ``if log:`` (the log is rank 0's alone once converted)."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from sample_log import SampleLog


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 4))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    generator = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 4))
    optimizer = torch.optim.Adam(generator.parameters(), lr=1e-2)
    log = SampleLog("samples.log")
    fixed = torch.randn(8, 4)
    step = 0
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(generator(x), y).backward()
            optimizer.step()
            if log and step % 2 == 0:
                samples = generator(fixed).detach()
                log.write(step, samples)
            step += 1
    torch.save(generator.state_dict(), "generator.pt")


if __name__ == "__main__":
    main()
