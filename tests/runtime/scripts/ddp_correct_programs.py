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


def main() -> None:
    out_dir = sys.argv[1]
    rec: dict = {"rank": ddpify.rank()}
    with ddpify.distributed():
        nested_downloads(out_dir, rec)
        saves_under_names_each_rank_computes(out_dir, rec)
    with open(os.path.join(out_dir, f"rank{rec['rank']}.json"), "w") as fh:
        json.dump(rec, fh)


if __name__ == "__main__":
    main()
