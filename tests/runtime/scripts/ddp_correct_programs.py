"""Run under torchrun (2 ranks, CPU): correct programs the runtime's guard rails must let
through, each shaped like a script seen in the wild.

Usage: torchrun --standalone --nproc_per_node=2 ddp_correct_programs.py OUT_DIR -> OUT_DIR/rank<r>.json
The assertions live in tests/runtime/test_runtime_correct_programs.py.
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch
from torch import nn

import ddpify.runtime as ddpify


def download(root: str, name: str) -> bool:
    """A dataset helper that guards its own download; called from another download block."""
    path = os.path.join(root, name)
    with ddpify.main_process_first():
        if ddpify.rank() == 0:
            time.sleep(0.3)
            with open(path, "w") as fh:
                fh.write("done")
        return os.path.exists(path)


def nested_downloads(out_dir: str, rec: dict) -> None:
    """Two main_process_first blocks nesting at run time: rank 0 runs all of the outer one
    before any other rank starts it."""
    with ddpify.main_process_first():
        rec["inner_seen"] = download(out_dir, "inner.txt")
        if ddpify.rank() == 0:
            time.sleep(0.3)
            with open(os.path.join(out_dir, "outer.txt"), "w") as fh:
                fh.write("done")
        rec["outer_seen"] = os.path.exists(os.path.join(out_dir, "outer.txt"))


def next_free_name(folder: str) -> str:
    i = 0
    while os.path.exists(os.path.join(folder, f"ckpt_{i}.pt")):
        i += 1
    return os.path.join(folder, f"ckpt_{i}.pt")


def saves_under_names_each_rank_computes(out_dir: str, rec: dict) -> None:
    """A "next free file name" loop that rank 1 runs after rank 0 already wrote its file."""
    folder = os.path.join(out_dir, "ckpts")
    os.makedirs(folder, exist_ok=True)
    if ddpify.rank() != 0:
        while not os.path.exists(os.path.join(folder, "ckpt_0.pt")):
            time.sleep(0.01)
    path = next_free_name(folder)
    ddpify.save({"w": torch.zeros(1)}, path)
    rec["saved_as"] = os.path.basename(path)


class ActNorm(nn.Module):
    """Glow's ActNorm: scale and shift set from the first batch it sees."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(features))
        self.scale = nn.Parameter(torch.ones(features))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.initialized:
            self.loc.data.copy_(-x.mean(0))
            self.scale.data.copy_(1 / (x.std(0) + 1e-6))
            self.initialized.fill_(1)
        return self.scale * (x + self.loc)


def flat(model: nn.Module) -> list[float]:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()


def data_dependent_init(rec: dict) -> None:
    """Each rank's first batch is its own shard: the initialisation must still agree."""
    torch.manual_seed(0)
    model = ddpify.prepare_model(nn.Sequential(ActNorm(3), nn.Linear(3, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    shard = torch.Generator().manual_seed(10 + ddpify.rank())
    for _ in range(3):
        x = torch.randn(8, 3, generator=shard) * (1 + ddpify.rank())
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    rec["actnorm_params"] = flat(model)
    # Glow's own spelling: the initialising forward goes around the wrapper, under no_grad
    model = ddpify.prepare_model(nn.Sequential(ActNorm(3), nn.Linear(3, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.no_grad():
        model.module(torch.randn(8, 3, generator=shard) * (1 + ddpify.rank()))
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(8, 3, generator=shard)).pow(2).mean().backward()
        optimizer.step()
    rec["actnorm_bypass_params"] = flat(model)


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)
        self.aux = nn.Linear(4, 2)  # its output is computed and discarded

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.body(x)
        self.aux(features)
        return self.head(features)


def unused_parameters(rec: dict) -> None:
    """With find_unused_parameters=True two steps run; without, the first backward stops
    with the names and the fix (DDP itself would raise at the second forward)."""
    x = torch.randn(4, 3)
    declared = ddpify.prepare_model(TwoHeads(), find_unused_parameters=True)
    optimizer = torch.optim.SGD(declared.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        declared(x).sum().backward()
        optimizer.step()
    rec["declared_steps"] = 2
    undeclared = ddpify.prepare_model(TwoHeads())
    try:
        undeclared(x).sum().backward()
    except RuntimeError as exc:
        rec["unused_error"] = [type(exc).__name__, str(exc)]


def main() -> None:
    out_dir = sys.argv[1]
    rec: dict = {"rank": ddpify.rank()}
    with ddpify.distributed():
        nested_downloads(out_dir, rec)
        saves_under_names_each_rank_computes(out_dir, rec)
        data_dependent_init(rec)
        unused_parameters(rec)
    with open(os.path.join(out_dir, f"rank{rec['rank']}.json"), "w") as fh:
        json.dump(rec, fh)


if __name__ == "__main__":
    main()
