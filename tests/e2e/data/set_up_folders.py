"""ddim-style set-up: stop when the experiment folder exists, unless told to overwrite it.
Rank 1 arrives late (a sleep on RANK), so a rank that asked for itself would find the folder
rank 0 has just created and stop, leaving rank 0 alone."""
import argparse
import os
import shutil
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--exp", default="exp")
parser.add_argument("--ni", action="store_true")
args = parser.parse_args()


def main():
    time.sleep(0.5 * int(os.environ.get("RANK", "0")))
    if os.path.exists(args.exp):
        if args.ni:
            shutil.rmtree(args.exp)
            os.makedirs(args.exp)
        else:
            print("folder exists, stopping")
            sys.exit(0)
    else:
        os.makedirs(args.exp)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    torch.save(model.state_dict(), os.path.join(args.exp, "model.pt"))


if __name__ == "__main__":
    main()
