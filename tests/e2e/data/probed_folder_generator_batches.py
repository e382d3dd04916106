"""RelativisticGAN's GAN_losses_iter.py shape (unseen20p): a run folder found by probing for the
first free name, batches drawn by an infinite generator with ``numpy.random.choice`` and taken
with ``generator.__next__()``, and checkpoint rotation with a one-line ``if exists: remove``.
Each rank probing for itself took its own folder (rank 1's empty), every rank drew the very same
batches (and the same noise), and the removal raced (FileNotFoundError on the slower rank)."""
import os

import numpy as np
import torch
import torch.nn as nn

run = 0
base_dir = f"runs/exp-{run}"
while os.path.exists(base_dir):
    run += 1
    base_dir = f"runs/exp-{run}"
os.makedirs(base_dir)

data = torch.randn(64, 4)
target = data.sum(dim=1, keepdim=True)


def random_sample():
    while True:
        index = np.random.choice(len(data), size=8, replace=False)
        yield index, data[index], target[index]


batches = random_sample()
np.random.seed(1)
torch.manual_seed(1)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
drawn = open(os.path.join(base_dir, f"drawn_{os.environ.get('RANK', '0')}.txt"), "w")
for epoch in range(3):
    for step in range(4):
        index, x, y = batches.__next__()
        noise = torch.randn(8, 4)  # a GAN's latent: torch's own stream
        drawn.write(" ".join(map(str, index.tolist())) + f" noise {noise.sum().item():.6f}\n")
        loss = nn.functional.mse_loss(model(x + 0.01 * noise), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), os.path.join(base_dir, f"epoch_{epoch}.pt"))
    previous = os.path.join(base_dir, f"epoch_{epoch - 1}.pt")
    if os.path.exists(previous): os.remove(previous)
drawn.close()
