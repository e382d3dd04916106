"""Run under torchrun (2 ranks, CPU): record what each rank's loaders and RNGs produce.

Usage: torchrun --standalone --nproc_per_node=2 ddp_data.py OUT_DIR -> OUT_DIR/rank<r>.json
The assertions live in tests/runtime/test_runtime_torchrun.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import warnings

import numpy
import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    SubsetRandomSampler,
)

import ddpify.runtime as ddpify

N = 32


class Indices(Dataset):
    """Item i is i, so a batch shows exactly which samples a rank drew."""

    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int) -> int:
        return i


class RandomItems(Dataset):
    """Items drawn from the (worker's) global RNG, to see whether worker seeds differ by rank."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> float:
        return float(torch.rand(()))


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(6))


def epochs(loader, count: int, explicit: bool) -> list[list[list[int]]]:
    """Batches of each epoch, optionally calling ddpify.set_epoch like a converted script."""
    seen = []
    for epoch in range(count):
        if explicit:
            ddpify.set_epoch(loader, epoch)
        seen.append([batch.tolist() for batch in loader])
    return seen


def main() -> None:
    out_dir = sys.argv[1]
    rec: dict = {
        "before_setup": {
            "rank": ddpify.rank(),
            "local_rank": ddpify.local_rank(),
            "world_size": ddpify.world_size(),
            "is_main": ddpify.is_main_process(),
            "is_distributed": ddpify.is_distributed(),
        }
    }
    ddpify.setup()
    ddpify.setup()  # idempotent
    rec["after_setup"] = {
        "rank": ddpify.rank(),
        "world_size": ddpify.world_size(),
        "is_distributed": ddpify.is_distributed(),
        "device": str(ddpify.device()),
    }
    # Never seeded by the script: setup starts every rank from rank 0's draw (generated data).
    rec["unseeded_after_setup"] = [random.random(), float(numpy.random.rand()), float(torch.rand(()))]

    # Identical on all ranks right after seeding (model init / generated data).
    ddpify.seed(torch.manual_seed, 0)
    rec["rand_after_seed"] = torch.rand(4).tolist()

    auto = ddpify.distributed_loader(Indices(), batch_size=8, shuffle=True)
    explicit = ddpify.distributed_loader(Indices(), 8, True)  # positional DataLoader args
    rec["loader_types"] = [type(auto).__name__, type(explicit).__name__]

    first = [batch.tolist() for batch in auto]  # epoch 0, no set_epoch anywhere
    # Per-rank from here on: the first loader iteration switched to rank seeds.
    rec["rand_after_first_iter"] = torch.rand(4).tolist()
    rec["unseeded_after_first_iter"] = [random.random(), float(numpy.random.rand())]
    second = [batch.tolist() for batch in auto]  # epoch 1, still no set_epoch
    rec["auto"] = [first, second]
    rec["explicit"] = epochs(explicit, 2, explicit=True)
    ddpify.set_epoch(explicit, 5)
    rec["explicit_epoch5"] = [b.tolist() for b in explicit]

    # A DataLoader built elsewhere (a helper in another file), rebuilt by ddpify.shard.
    sharded = ddpify.shard(DataLoader(Indices(), batch_size=8, shuffle=True))
    rec["shard_type"] = type(sharded).__name__
    rec["shard"] = epochs(sharded, 2, explicit=True)

    # A user sampler over the even half of the data must be kept and sharded.
    subset = list(range(0, N, 2))
    kept = ddpify.distributed_loader(
        Indices(), batch_size=4, sampler=SubsetRandomSampler(subset)
    )
    rec["user_sampler_type"] = type(kept.sampler).__name__
    rec["user_sampler"] = epochs(kept, 2, explicit=False)

    # A user batch sampler: 5 batches over 13 items, rank r takes batches r, r+2, ... padded.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        by_batch = ddpify.distributed_loader(
            Indices(), batch_sampler=BatchSampler(SequentialSampler(range(13)), 3, False)
        )
        rec["batch_sampler"] = [b.tolist() for b in by_batch]
        stream = ddpify.distributed_loader(Stream(), batch_size=2)
        rec["iterable_type"] = type(stream).__name__
        rec["iterable"] = [b.tolist() for b in stream]
    rec["warnings"] = [str(w.message) for w in caught if "ddpify" in str(w.message)]

    # Global batch preserved by default; per-process batch on request; indivisible rejected.
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        per_process = ddpify.distributed_loader(Indices(), batch_size=5, per_process_batch=True)
        ddpify.distributed_loader(Indices(), batch_size=7, per_process_batch=True)
    rec["per_process_batch_sizes"] = [len(b) for b in per_process]
    rec["per_process_stderr"] = err.getvalue()
    try:
        ddpify.distributed_loader(Indices(), batch_size=5)
        rec["indivisible_error"] = None
    except ValueError as exc:
        rec["indivisible_error"] = str(exc)

    # DataLoader worker seeds come from the (now per-rank) global RNG.
    workers = ddpify.distributed_loader(RandomItems(), batch_size=2, num_workers=1)
    rec["worker_values"] = [v for b in workers for v in b.tolist()]
    rec["plain_dataloader_is_subclass"] = isinstance(workers, DataLoader)

    ddpify.teardown()
    rec["after_teardown_is_distributed"] = ddpify.is_distributed()
    with open(os.path.join(out_dir, f"rank{rec['before_setup']['rank']}.json"), "w") as fh:
        json.dump(rec, fh)


if __name__ == "__main__":
    main()
