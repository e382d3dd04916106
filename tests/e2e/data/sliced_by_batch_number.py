"""Batches sliced by the batch number in a loop over range(n // B), from data drawn inside
main() without any seed, one loop for the training and the test passes (MADE-style): no
DataLoader and no seed at all."""
import json
import os

import torch
import torch.nn.functional as F


def run_epoch(model, optimizer, X, Y, ids, split, seen):
    torch.set_grad_enabled(split == "train")
    model.train() if split == "train" else model.eval()
    B = 8
    for step in range(X.size(0) // B):
        x, y = X[step * B:(step + 1) * B], Y[B * step:B * step + B]
        rows = ids[step * B:step * B + B]
        loss = F.mse_loss(model(x), y)
        if split == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        seen[split].append(rows.tolist())
    torch.set_grad_enabled(True)


def main():
    X = torch.randn(64, 4)
    Y = X.sum(dim=1, keepdim=True)
    ids = torch.arange(64)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    seen = {"train": [], "test": []}
    for epoch in range(2):
        run_epoch(model, optimizer, X, Y, ids, "train", seen)
        run_epoch(model, optimizer, X, Y, ids, "test", seen)
    with open(f"rows_{os.environ.get('RANK', '0')}.json", "w") as handle:
        json.dump({**seen, "data": X.tolist()}, handle)


if __name__ == "__main__":
    main()
