"""Issue 20, classes 2 and 3: the model comes out of an if/elif chain, the optimizer class from
a dict of constructors, and the batches reach backward through a dict of loaders keyed by a
phase chosen at run time (train and valid in one loop)."""

import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="mlp")
parser.add_argument("--optimizer", default="sgd")
args = parser.parse_args()
torch.manual_seed(0)

if args.arch == "linear":
    model = nn.Linear(4, 1)
elif args.arch == "mlp":
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
else:
    raise ValueError(args.arch)

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
optimizer_class = OPTIMIZERS[args.optimizer]
optimizer = optimizer_class(model.parameters(), lr=0.05)
loaders = {
    "train": DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True),
    "valid": DataLoader(TensorDataset(torch.randn(24, 4), torch.randn(24, 1)), batch_size=8),
}
for epoch in range(2):
    for phase in ("train", "valid"):
        model.train(phase == "train")
        total = 0.0
        for x, y in loaders[phase]:
            with torch.set_grad_enabled(phase == "train"):
                loss = nn.functional.mse_loss(model(x), y)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item()
        print(epoch, phase, total)
torch.save(model.state_dict(), "model.pt")
