"""Sharding a batch iterator that is not a DataLoader (a project's own ``DatasetIterater``, a
bucket iterator): every rank iterates the same batches and keeps its slice of each one.

Nothing there takes a sampler, so the split happens per batch: each tensor of the batch (in
tuples, lists and dicts, as deep as they go) and each per-sample list (a list of strings or
numbers beside the tensors) is cut along its first dimension into world-size parts, the same
cut for all of them, and the rank keeps its part. Every rank then takes the same number of steps
(DDP needs that) and the global batch stays what one process used. A batch that cannot be cut
safely -- parts with different first dimensions, fewer rows than ranks -- goes whole to every
rank (right, no faster), with a warning once. The parts are disjoint only when every rank
iterates the same batches: the first batch of each pass is compared across ranks (one small
all-gather per pass), and a difference is reported once, with the fix.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist

from ._guard import training_now
from ._process_group import is_distributed, is_main_process, rank, world_size

_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """warnings.warn on rank 0 only, once per distinct message."""
    if message not in _warned and is_main_process():
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


class ShardedBatches:
    """``batches`` with each batch cut across the ranks (see the module docstring);
    ``only_when_training``: cut only in the passes that train (gradients on, a wrapped model
    in train mode), whole in the others (evaluation reads every batch on every rank)."""

    def __init__(self, batches: Any, *, only_when_training: bool = False) -> None:
        self.__dict__["_unsharded"] = batches
        self.__dict__["_only_when_training"] = only_when_training

    def __iter__(self) -> Iterator[Any]:
        batches = self.__dict__["_unsharded"]
        if self.__dict__["_only_when_training"] and not training_now():
            yield from batches
            return
        world, me = world_size(), rank()
        for index, batch in enumerate(batches):
            if index == 0:
                _check_agreement(batch)
            yield split_batch(batch, world, me)

    def __len__(self) -> int:
        return len(self.__dict__["_unsharded"])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_unsharded"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__["_unsharded"], name, value)


def split_batch(batch: Any, world: int, me: int) -> Any:
    """This rank's part of ``batch``: every part with rows cut the same way."""
    sizes: set[int] = set()
    _row_counts(batch, sizes)
    if len(sizes) != 1:
        _warn_once(
            "ddpify.shard: a batch whose parts have different numbers of rows cannot be split across ranks; every rank "
            "trains on the whole batch (right, but no faster). Build its data with a DataLoader and a DistributedSampler."
        )
        return batch
    rows = sizes.pop()
    if rows < world:
        return batch  # fewer rows than ranks (a last, short batch): every rank takes it whole
    start, end = rows * me // world, rows * (me + 1) // world
    return _take(batch, start, end)


def _row_counts(batch: Any, sizes: set[int]) -> None:
    if isinstance(batch, torch.Tensor):
        if batch.dim() > 0:
            sizes.add(batch.shape[0])
    elif isinstance(batch, dict):
        for value in batch.values():
            _row_counts(value, sizes)
    elif _per_sample(batch):
        sizes.add(len(batch))
    elif isinstance(batch, (tuple, list)):
        for value in batch:
            _row_counts(value, sizes)


def _take(batch: Any, start: int, end: int) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch[start:end] if batch.dim() > 0 else batch
    if isinstance(batch, dict):
        return type(batch)((key, _take(value, start, end)) for key, value in batch.items())
    if _per_sample(batch):
        return batch[start:end]
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(_take(value, start, end) for value in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(_take(value, start, end) for value in batch)
    return batch


def _per_sample(value: Any) -> bool:
    """A list of plain values, one per row (``["text a", "text b"]``, lengths)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, (str, bytes, int, float, bool)) for v in value)


def _check_agreement(batch: Any) -> None:
    """Warn once when the ranks iterate different batches (each then keeps a part of its own)."""
    if not is_distributed():
        return
    fingerprint = _fingerprint(batch)
    gathered: list[Any] = [None] * world_size()
    dist.all_gather_object(gathered, fingerprint)
    if any(other != fingerprint for other in gathered):
        _warn_once(
            "ddpify.shard: the ranks iterate different batches (the iterator shuffles with a per-rank random state), so "
            "the parts each rank keeps are not disjoint. Shuffle with a seed every rank shares (the epoch number), or "
            "build the data with a DataLoader and a DistributedSampler."
        )


def _fingerprint(batch: Any) -> tuple[Any, ...]:
    parts: list[Any] = []

    def visit(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            parts.append((tuple(value.shape), float(value.detach().double().sum()) if value.numel() else 0.0))
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, (tuple, list)):
            for item in value:
                visit(item)
        else:
            parts.append(repr(value)[:64])

    visit(batch)
    return tuple(parts)
