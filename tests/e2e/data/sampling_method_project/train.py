"""glow's shape: a model of a sibling module (star-imported), nn.DataParallel after it is set
up, an optional resume inside an ``if`` that hands the model to a helper and takes it back,
and the model's own ``sample()`` called at a print step: its images are written, never
trained on, so it is no forward DDP has to see."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from flows import *

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--load", default=None)
args = parser.parse_args()

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = Flow(8).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model = nn.DataParallel(model).to(device)
if args.load is not None:
    model, optimizer = load_session(model, optimizer, args.load)
loader = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=8, shuffle=True)
for epoch in range(args.epochs):
    for i, (x,) in enumerate(loader):
        loss = model(x.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (i + 1) % 4 == 0:
            images = model.module.sample()
            torch.save(images, f"samples_{epoch}_{i}.pt")
    save_session(model, optimizer, "session.pt")
