"""Sharding a batch iterator that is not a DataLoader (a project's own ``DatasetIterater``, a
bucket iterator): every rank iterates the same batches and keeps its slice of each one.

Nothing there takes a sampler, so the split happens per batch: each tensor of the batch (in
tuples, lists and dicts, as deep as they go) and each per-sample list (a list of strings or
numbers beside the tensors) is cut along its first dimension into world-size parts, the same
cut for all of them, and the rank keeps its part. Every rank then takes the same number of steps
(DDP needs that) and the global batch stays what one process used. A batch that cannot be cut
safely -- parts with different first dimensions, fewer rows than ranks -- goes whole to every
rank (right, no faster), with a warning once.

The iterator's own code (its shuffle) runs under a random state of its own, taken when it is
sharded -- before training, where ``ddpify.seed`` gives every rank the same one -- and carried
from batch to batch, so the ranks draw the same order in every epoch while the model's dropout
uses per-rank streams (switched on at the first batch, as a sharded DataLoader does). The first
batch of each pass is compared across ranks (one small all-gather): when they differ (an
unseeded shuffle, or batches from a loader sharded already), each rank keeps its batches whole
for that pass, with a warning once.
"""

from __future__ import annotations

import itertools
import random
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist

from . import _seed
from ._guard import training_now
from ._process_group import is_distributed, is_main_process, rank, world_size

_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """warnings.warn on rank 0 only, once per distinct message."""
    if message not in _warned and is_main_process():
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def reiterable_batches(value: Any) -> bool:
    """A batch iterator class of the project's own, iterated afresh each pass (also one with
    ``__next__`` that starts over after ``StopIteration``, as such classes are written); not a
    DataLoader, a generator or a builtin one-pass iterator (``map``, ``zip``, ``itertools``),
    whose batches may come from a loader sharded already and cannot be replayed."""
    from torch.utils.data import DataLoader

    kind = type(value)
    if isinstance(value, (DataLoader, str, bytes, types.GeneratorType)) or kind.__module__ in ("builtins", "itertools"):
        return False
    return callable(getattr(kind, "__iter__", None))


class ShardedBatches:
    """``batches`` with each batch cut across the ranks (see the module docstring);
    ``only_when_training``: cut only in the passes that train (gradients on, a wrapped model
    in train mode), whole in the others (evaluation reads every batch on every rank)."""

    def __init__(self, batches: Any, *, only_when_training: bool = False) -> None:
        self.__dict__["_unsharded"] = batches
        self.__dict__["_only_when_training"] = only_when_training
        self.__dict__["_random_state"] = _random_states()

    def __iter__(self) -> Iterator[Any]:
        batches = self.__dict__["_unsharded"]
        if self.__dict__["_only_when_training"] and not training_now():
            yield from batches
            return
        world, me = world_size(), rank()
        iterator = self._drawn(iter, batches)
        cut = True
        for index in itertools.count():
            try:
                batch = self._drawn(next, iterator)
            except StopIteration:
                return
            if index == 0:
                cut = _same_on_every_rank(batch)
                _seed.switch_to_rank_seeds()
            yield split_batch(batch, world, me) if cut else batch

    def __next__(self) -> Any:
        """``next(batches)`` for code that steps the iterator by hand: this rank's part of the
        next batch, a new pass after the end of one."""
        current = self.__dict__.get("_current")
        if current is None:
            current = self.__dict__["_current"] = iter(self)
        try:
            return next(current)
        except StopIteration:
            self.__dict__["_current"] = None
            raise

    def _drawn(self, step: Any, argument: Any) -> Any:
        """``step(argument)`` under the iterator's own random state, shared by the ranks."""
        saved = _random_states()
        _set_random_states(self.__dict__["_random_state"])
        try:
            return step(argument)
        finally:
            self.__dict__["_random_state"] = _random_states()
            _set_random_states(saved)

    def __len__(self) -> int:
        return len(self.__dict__["_unsharded"])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_unsharded"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__["_unsharded"], name, value)


def _random_states() -> tuple[Any, ...]:
    """The CPU random states an iterator may draw from: torch, random, numpy (if imported)."""
    numpy = sys.modules.get("numpy")
    return torch.get_rng_state(), random.getstate(), numpy.random.get_state() if numpy is not None else None


def _set_random_states(states: tuple[Any, ...]) -> None:
    torch_state, python_state, numpy_state = states
    torch.set_rng_state(torch_state)
    random.setstate(python_state)
    numpy = sys.modules.get("numpy")
    if numpy is not None and numpy_state is not None:
        numpy.random.set_state(numpy_state)


def batch_part(batch: Any) -> Any:
    """This rank's part of one batch the script slices itself (``X[i:i + bs]`` in a loop over
    ``range(0, n, bs)``): rows cut as ``split_batch`` cuts them, the same cut for every tensor of
    the step, so ``x`` and ``y`` stay paired. The whole batch with one process, and in a pass that
    does not train (gradients off, or every wrapped model in eval mode: the same loop run over
    the test split), so every rank evaluates what one process would and its metrics stay whole;
    the first cut switches the random streams to per-rank ones, as training data flowing does."""
    world = world_size()
    if world <= 1 or not training_now():
        return batch
    _seed.switch_to_rank_seeds()
    return split_batch(batch, world, rank())


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
    if isinstance(batch, torch.Tensor) or _is_array(batch):
        if len(batch.shape) > 0:
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
    if isinstance(batch, torch.Tensor) or _is_array(batch):
        return batch[start:end] if len(batch.shape) > 0 else batch
    if isinstance(batch, dict):
        return type(batch)((key, _take(value, start, end)) for key, value in batch.items())
    if _per_sample(batch):
        return batch[start:end]
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(_take(value, start, end) for value in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(_take(value, start, end) for value in batch)
    return batch


def _is_array(value: Any) -> bool:
    """A numpy array (rows along its first axis), without importing numpy."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def _per_sample(value: Any) -> bool:
    """A list of plain values, one per row (``["text a", "text b"]``, lengths)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, (str, bytes, int, float, bool)) for v in value)


def _same_on_every_rank(batch: Any) -> bool:
    """Whether every rank drew this batch (the first of a pass); warns once when not."""
    if not is_distributed():
        return True
    fingerprint = _fingerprint(batch)
    gathered: list[Any] = [None] * world_size()
    dist.all_gather_object(gathered, fingerprint)
    if all(other == fingerprint for other in gathered):
        return True
    _warn_once(
        "ddpify.shard: the ranks iterate different batches (an iterator that shuffles without a seed every rank shares, "
        "or batches of a loader sharded already): each rank trains on its own batches whole. Build the data with a "
        "DataLoader and a DistributedSampler to shard it."
    )
    return False


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
