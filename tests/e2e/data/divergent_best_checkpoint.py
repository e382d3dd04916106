"""A "best checkpoint" decided by a metric of the training data: once each rank trains on its
own shard, the ranks decide differently. Rows with an even index hold positive inputs, odd
ones negative, and the loader does not shuffle, so rank 0 (even rows) sees its score rise
every epoch and rank 1 (odd rows) sees its own fall: rank 0 saves every epoch, rank 1 only
the first. A save that waited for every rank at a barrier would hang here.

``evaluate`` reloads the best checkpoint on every rank after training. Rank 0's last save is
slow (a sleep): a rank that read the file without waiting for it would load an older one."""
import argparse
import os
import pathlib
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--out-dir", default=".")
args = parser.parse_args()


def main():
    signs = torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(64)]).unsqueeze(1)
    inputs = torch.rand(64, 4) * signs
    train_loader = DataLoader(TensorDataset(inputs, inputs.sum(dim=1, keepdim=True)), batch_size=16, shuffle=False)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    best = float("-inf")
    for epoch in range(args.epochs):
        seen = 0.0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            seen += x.sum().item()
        score = seen * (epoch + 1)
        if score > best:
            best = score
            pathlib.Path(args.out_dir, f"entered-rank{os.environ.get('RANK', '0')}-epoch{epoch}").touch()
            time.sleep(0.5 if epoch == args.epochs - 1 else 0)
            torch.save(model.state_dict(), os.path.join(args.out_dir, "best.pt"))
    evaluate(model)


def evaluate(model):
    best_path = os.path.join(args.out_dir, "best.pt")
    if os.path.exists(best_path):
        model.load_state_dict(torch.load(best_path))
    total = sum(p.sum().item() for p in model.parameters())
    pathlib.Path(args.out_dir, f"loaded-rank{os.environ.get('RANK', '0')}").write_text(repr(total))


if __name__ == "__main__":
    main()
