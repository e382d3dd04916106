"""A GAN-style discriminator step whose targets come from a helper handed the batch size: split
per rank, the loader's batches would be half the targets' length (a size mismatch in the loss),
so the loader keeps the per-process batch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 8


def make_targets(n, value):
    return torch.full((n, 1), value)


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
critic = nn.Linear(4, 1)
optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)
for epoch in range(2):
    for (real,) in loader:
        fake = torch.randn(BATCH_SIZE, 4)
        loss = nn.functional.binary_cross_entropy_with_logits(critic(real), make_targets(BATCH_SIZE, 1.0))
        loss = loss + nn.functional.binary_cross_entropy_with_logits(critic(fake), make_targets(BATCH_SIZE, 0.0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
