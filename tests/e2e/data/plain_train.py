"""A small single-process training script used to check the trace shim itself.

Its first dataset tensor is ``arange(N)``, so every batch carries the dataset
indices it was built from. The script writes those observed indices (and a hash
of everything it computed) to ``observed.json``: a test compares them with what
the shim recorded, and compares runs with and without the shim.
"""
import argparse
import hashlib
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out-dir", default=".")
    args = parser.parse_args()

    torch.manual_seed(0)
    n = 96
    ids = torch.arange(n)
    x = torch.randn(n, 4)
    y = x @ torch.randn(4, 1)
    dataset = TensorDataset(ids, x, y)
    loaders = {
        "simple": DataLoader(dataset, batch_size=16, shuffle=True),
        # worker processes prefetch index batches; persistent workers reuse one iterator
        "workers": DataLoader(dataset, batch_size=12, shuffle=True, num_workers=2,
                              persistent_workers=True),
        "eval": DataLoader(dataset, batch_size=32, shuffle=False),
    }
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    observed: dict[str, list[list[int]]] = {name: [] for name in loaders}
    digest = hashlib.sha256()
    for _ in range(args.epochs):
        for name, loader in loaders.items():
            seen: list[int] = []
            for idx, xb, yb in loader:
                seen.extend(idx.tolist())
                digest.update(xb.numpy().tobytes())
                if name != "eval":
                    optimizer.zero_grad()
                    loss = nn.functional.mse_loss(model(xb), yb)
                    loss.backward()
                    optimizer.step()
            observed[name].append(seen)
    for p in model.parameters():
        digest.update(p.detach().numpy().tobytes())
    digest.update(torch.rand(3).numpy().tobytes())  # global RNG state must be unchanged too

    os.makedirs(args.out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out_dir, "plain.pt"))
    with open(os.path.join(args.out_dir, "observed.json"), "w") as fh:
        json.dump({"order": list(loaders), "observed": observed, "digest": digest.hexdigest()}, fh)


if __name__ == "__main__":
    main()
