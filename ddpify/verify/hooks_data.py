"""Recorder hooks on data: which indices every DataLoader pass fetched and the datasets the script
generated (the random index draws are ``hooks_draws``').

A pass is one iterator over a loader; it is written when it ends (or at exit, marked
incomplete), with the number of optimizer steps it fed: a pass with steps is a training pass,
one without (evaluation) is not judged. A step feeds from the pass that fetched last before it
and from each pass that fetched again after it (zip of two loaders), not from every pass left
open: a ``next(iter(test_loader))`` grabbing a fixed sample before training, or a
``next(iter(loader))`` printing the batch shape each epoch, stays open while the real passes
train, yet fed no step.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import operator
from typing import Any

import torch
import torch.utils.data.dataloader as dataloader_module
from torch.utils.data import DataLoader, TensorDataset

from ddpify.verify.recording import Recorder, user_frame, where

__all__ = ["install", "tensor_digest"]

MAX_INDICES = 2_000_000  # per pass; beyond it the pass is marked truncated
_HASHED_BYTES = 64 * 2**20  # a dataset tensor larger than this is hashed from a strided sample
_SIGNATURE = inspect.signature(DataLoader)


def tensor_digest(tensors: Any) -> str:
    """sha1 of the tensors' shapes, dtypes and bytes (CPU copies; a sample of huge ones)."""
    digest = hashlib.sha1()
    for tensor in tensors:
        flat = tensor.detach().reshape(-1)
        if flat.numel() * flat.element_size() > _HASHED_BYTES:
            flat = flat[:: max(1, flat.numel() * flat.element_size() // _HASHED_BYTES)]
        digest.update(f"{tuple(tensor.shape)}{tensor.dtype}".encode())
        digest.update(flat.cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()[:16]


class _Pass:
    """One iterator's fetched indices, until it ends."""

    __slots__ = ("loader", "number", "indices", "batches", "steps_seen", "fed", "truncated", "sampler_epoch")

    def __init__(self, loader: int, number: int, sampler_epoch: Any) -> None:
        self.loader = loader
        self.number = number
        self.indices: list[int | None] = []
        self.batches: list[int] = []
        self.steps_seen: int | None = None  # the step count when this pass last fetched
        self.fed = 0  # optimizer steps this pass fed
        self.truncated = False
        self.sampler_epoch = sampler_epoch

    def credit(self, steps: int) -> None:
        """The steps taken since this pass last fetched were fed by it."""
        if self.steps_seen is not None:
            self.fed += steps - self.steps_seen
        self.steps_seen = steps


def _single_process_batch(loader: Any) -> int | None:
    """The batch size of the loader the script builds with one process, when the runtime's
    ``distributed_loader`` kept its arguments; None otherwise."""
    original = getattr(loader, "single_process_arguments", None)
    if original is None:
        return None
    try:
        bound = _SIGNATURE.bind(*original[0], **original[1]).arguments
    except TypeError:
        return None
    if bound.get("batch_sampler") is not None:
        return None
    return bound.get("batch_size", 1)


def install(rec: Recorder) -> None:
    """Patch DataLoader, its iterators, TensorDataset and the index draws."""
    loaders: list[int] = []  # ids handed out, in construction order
    described: set[int] = set()
    open_passes: dict[int, _Pass] = {}  # loader id -> its current pass
    pass_counts: dict[int, int] = {}
    latest: list[_Pass] = []  # the pass that fetched last, while it is open

    original_init = DataLoader.__init__

    @functools.wraps(original_init)
    def loader_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        object.__setattr__(self, "_ddpify_verify", (len(loaders), where(user_frame(1))))
        loaders.append(len(loaders))

    def describe(loader: Any, ident: int, site: str) -> None:
        try:
            length: int | None = len(loader.dataset)
        except Exception:
            length = None
        sampler = loader.sampler
        if getattr(loader, "per_process_batch", False) and loader.batch_size:
            rec.per_process_batches.add(loader.batch_size)
        rec.emit(
            "loader",
            id=ident,
            site=site,
            dataset=type(loader.dataset).__name__,
            length=length,
            order_length=_order_length(sampler, length),
            batch_size=loader.batch_size,
            drop_last=loader.drop_last,
            sampler=type(sampler).__name__,
            sampler_drop_last=getattr(sampler, "drop_last", None),
            replacement=bool(getattr(getattr(sampler, "inner", None) or sampler, "replacement", False)),
            batch_sampler=type(loader.batch_sampler).__name__ if loader.batch_sampler is not None else None,
            single_batch=_single_process_batch(loader),
            per_process_batch=bool(getattr(loader, "per_process_batch", False)),
        )

    def close(current: _Pass, complete: bool) -> None:
        open_passes.pop(current.loader, None)
        if latest and latest[0] is current:
            current.credit(rec.steps)
            latest.clear()
        rec.emit(
            "pass",
            loader=current.loader,
            n=current.number,
            indices=current.indices,
            batches=current.batches,
            complete=complete,
            truncated=current.truncated,
            steps=current.fed,
            sampler_epoch=current.sampler_epoch,
        )

    def begin(iterator: Any, loader: Any) -> None:
        mark = getattr(loader, "_ddpify_verify", None)
        if mark is None:
            return
        ident, site = mark
        if ident not in described:
            described.add(ident)
            describe(loader, ident, site)
        if ident in open_passes:
            close(open_passes[ident], complete=False)  # abandoned: a new pass began
        number = pass_counts.get(ident, 0)
        pass_counts[ident] = number + 1
        rec.passes += 1
        current = open_passes[ident] = _Pass(ident, number, getattr(loader.sampler, "epoch", None))
        iterator._ddpify_verify_pass = current

    base = dataloader_module._BaseDataLoaderIter
    original_iter_init, original_reset, original_next_index, original_next = base.__init__, base._reset, base._next_index, base.__next__

    @functools.wraps(original_iter_init)
    def iter_init(self: Any, loader: Any) -> None:
        original_iter_init(self, loader)
        begin(self, loader)

    @functools.wraps(original_reset)
    def reset(self: Any, loader: Any, first_iter: bool = False) -> None:
        original_reset(self, loader, first_iter)
        if not first_iter:  # persistent workers starting another epoch
            begin(self, loader)

    @functools.wraps(original_next_index)
    def next_index(self: Any) -> Any:
        current: _Pass | None = getattr(self, "_ddpify_verify_pass", None)
        index = original_next_index(self)  # workers ask ahead of the steps: only the order is taken here
        if current is not None and not current.truncated:
            batch = index if isinstance(index, (list, tuple)) else [index]
            current.indices.extend(_index(i) for i in batch)
            current.batches.append(len(batch))
            current.truncated = len(current.indices) > MAX_INDICES
        return index

    @functools.wraps(original_next)
    def next_batch(self: Any) -> Any:
        """A batch handed to the script: the steps since the last one are this pass's (with
        ``num_workers`` > 0, indices are drawn a whole prefetch window ahead, so a short pass
        was over in ``_next_index`` before its first step)."""
        current: _Pass | None = getattr(self, "_ddpify_verify_pass", None)
        if current is not None and open_passes.get(current.loader) is not current:
            current = None  # closed: a newer pass of its loader began
        try:
            batch = original_next(self)
        except StopIteration:
            if current is not None:
                close(current, complete=True)
            raise
        if current is not None:
            fetched(current)
        return batch

    def fetched(current: _Pass) -> None:
        """Credit the steps since the last fetch to the pass that made it, and to this one."""
        if latest and latest[0] is not current:
            latest[0].credit(rec.steps)
        current.credit(rec.steps)
        latest[:] = [current]

    DataLoader.__init__ = loader_init  # type: ignore[method-assign]
    base.__init__ = iter_init  # type: ignore[method-assign]
    base._reset = reset  # type: ignore[method-assign]
    base._next_index = next_index  # type: ignore[method-assign]
    base.__next__ = next_batch  # type: ignore[method-assign]

    def close_all() -> None:
        for p in list(open_passes.values()):
            close(p, complete=False)

    rec.at_exit.append(close_all)

    original_dataset_init = TensorDataset.__init__
    datasets = [0]

    @functools.wraps(original_dataset_init)
    def dataset_init(self: Any, *tensors: Any) -> None:
        original_dataset_init(self, *tensors)
        try:
            rec.emit("dataset", n=datasets[0], digest=tensor_digest(self.tensors), length=len(self), site=where(user_frame(1)))
        except Exception as exc:
            rec.emit("recorder-error", where="TensorDataset", message=repr(exc))
        datasets[0] += 1

    TensorDataset.__init__ = dataset_init  # type: ignore[method-assign]


def _order_length(sampler: Any, length: int | None) -> int | None:
    """How many indices one pass of the whole job reads: the user's sampler's length (a
    ``SubsetRandomSampler`` draws its subset, not the dataset; under ddpify's sharding the
    wrapped sampler's), the dataset's for a ``DistributedSampler`` (its own length is one
    rank's share)."""
    user = getattr(sampler, "inner", None) or sampler
    if type(user).__name__ == "DistributedSampler":
        return length
    try:
        return len(user)
    except Exception:
        return length


def _index(element: Any) -> int | None:
    """A fetched dataset index as an int: also a numpy integer (a ``SubsetRandomSampler`` over
    ``np.random.permutation`` indices yields them) or a one-element integer tensor; None for a
    key that is not an index (a string, a tuple)."""
    try:
        return operator.index(element)
    except TypeError:
        return None
