import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from builders import build_optimizers
from steps import GanSteps

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
batch_size = 8
dataset = TensorDataset(torch.randn(64, 6))
loader = DataLoader(
    dataset,
    batch_size=batch_size,
    shuffle=True, drop_last=True
)
generator = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 6)).to(device)
discriminator = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
g_optimizer, d_optimizer = build_optimizers(generator, discriminator, 1e-3)

# Use multiple GPUs if possible
generator = nn.DataParallel(generator)
discriminator = nn.DataParallel(discriminator)
steps = GanSteps(generator, discriminator, g_optimizer, d_optimizer)

for epoch in range(args.epochs):
    for (real,) in loader:
        real = real.to(device)
        z = torch.randn((batch_size, 3), device=device)
        d_loss = steps.discriminator_step(real, z)
        g_loss = steps.generator_step(torch.randn((batch_size, 3), device=device))
    print("epoch %d d_loss %.4f g_loss %.4f" % (epoch, d_loss, g_loss))

torch.save({"generator": generator.state_dict(), "discriminator": discriminator.state_dict()}, "gan.pt")
