"""DataLoader sharding: each rank sees a disjoint part of every epoch, reshuffled per epoch.

The DataLoader arguments a script passes are kept; only what DDP requires changes (sampler,
per-rank batch size). With one process ``distributed_loader`` is exactly ``DataLoader``.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
import os
import random
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Optional

import torch
from torch.utils.data import DataLoader, IterableDataset, Sampler
from torch.utils.data.distributed import DistributedSampler

from . import _passes, _seed
from ._batches import ShardedBatches, reiterable_batches
from ._env import detect_env
from ._full_batches import keep_batches_full
from ._guard import call_site, training_now
from ._held_loaders import shard_held
from ._loader_arguments import DATALOADER_SIGNATURE, extra_state, loader_arguments, rebuildable
from ._process_group import is_main_process, rank, world_size

__all__ = ["EpochDataLoader", "ShardedSampler", "ShardedBatchSampler", "distributed_loader", "set_epoch", "shard"]


# Messages already shown by this process: "once" must hold even where warning filters say
# "always" (pytest, notebooks), and must not repeat for every loader.
_announced: set[str] = set()


def _warn_once(message: str) -> None:
    """warnings.warn on rank 0 only, once per distinct message."""
    if message in _announced or not is_main_process():
        return
    _announced.add(message)
    warnings.warn(message, UserWarning, stacklevel=3)


def _print_once(message: str) -> None:
    """An informational line on rank 0 only, once per message, on stderr (apart from the script's stdout)."""
    if message in _announced or not is_main_process():
        return
    _announced.add(message)
    print(message, file=sys.stderr, flush=True)


# Elements taken from a user's sampler per switch to its private RNG states: large enough that
# switching costs nothing per sample, small enough that memory stays bounded whatever its length.
_CHUNK = 4096


class _PrivateRng:
    """The RNG states a user's sampler draws from while it is sharded.

    Every rank seeds them alike (``seed + epoch``), so every rank draws the same full order;
    the script's own streams (which differ per rank once training started, see ``_seed``) are
    saved before each chunk and restored after it, untouched; and the private states carry
    over from one chunk to the next, so a sampler of any length is drawn lazily.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.states: Optional[tuple[Any, Any, Any]] = None

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        numpy = sys.modules.get("numpy")  # only if the script uses it; never import it ourselves
        saved = (torch.get_rng_state(), random.getstate(), numpy.random.get_state() if numpy is not None else None)
        if self.states is None:
            torch.manual_seed(self.seed)
            random.seed(self.seed)
            if numpy is not None:
                numpy.random.seed(self.seed % 2**32)
        else:
            torch.set_rng_state(self.states[0])
            random.setstate(self.states[1])
            if numpy is not None and self.states[2] is not None:
                numpy.random.set_state(self.states[2])
        try:
            yield
        finally:
            numpy = sys.modules.get("numpy")
            self.states = (torch.get_rng_state(), random.getstate(), numpy.random.get_state() if numpy is not None else None)
            torch.set_rng_state(saved[0])
            random.setstate(saved[1])
            if numpy is not None and saved[2] is not None:
                numpy.random.set_state(saved[2])


def _agreed_order(inner: Iterable[Any], seed: int) -> Iterator[Any]:
    """``inner``'s full order, identical on every rank, drawn ``_CHUNK`` elements at a time."""
    rng = _PrivateRng(seed)
    iterator: Optional[Iterator[Any]] = None
    while True:
        with rng.active():
            if iterator is None:
                iterator = iter(inner)
            chunk = list(itertools.islice(iterator, _CHUNK))
        if not chunk:
            return
        yield from chunk


def _pad_and_shard(order: Iterable[Any], num_replicas: int, rank_: int) -> Iterator[Any]:
    """This rank's strided share of ``order`` padded to a multiple of ``num_replicas`` by
    repeating it from the start (as DistributedSampler does), so every rank gets the same count
    and no rank waits forever in a collective. Lazy: only the first ``num_replicas - 1``
    elements are kept, for the padding."""
    head: list[Any] = []
    count = 0
    for element in order:
        if count < num_replicas - 1:
            head.append(element)
        if count % num_replicas == rank_:
            yield element
        count += 1
    if not count:
        return
    for position in range(count, math.ceil(count / num_replicas) * num_replicas):
        if position % num_replicas == rank_:
            yield head[(position - count) % len(head)]


class _ShardingBase:
    """Shared state of the two wrappers: which rank, and which epoch's agreed seed to use."""

    def __init__(self, inner: Iterable[Any], num_replicas: int, rank: int, seed: int = 0) -> None:
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(f"rank {rank} is not in [0, {num_replicas})")
        self.inner = inner
        self.num_replicas = num_replicas
        self.rank = rank
        self.seed = seed
        self.epoch = 0

    def __getattr__(self, name: str) -> Any:
        """What the wrapper does not define is the wrapped object's (``loader.sampler.indices``
        of a ``SubsetRandomSampler``, ``.weights``): code written for the user's sampler keeps
        working. Those describe the whole order, not this rank's share (``len(loader.sampler)``
        is the share)."""
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch (and so the shuffle); forwarded to the wrapped object if it cares."""
        self.epoch = epoch
        inner_set_epoch = getattr(self.inner, "set_epoch", None)
        if callable(inner_set_epoch):
            inner_set_epoch(epoch)

    def __iter__(self) -> Iterator[Any]:
        """This rank's share of the wrapped object's order for this epoch, drawn lazily."""
        return _pad_and_shard(_agreed_order(self.inner, self.seed + self.epoch), self.num_replicas, self.rank)

    def __len__(self) -> int:
        return math.ceil(len(self.inner) / self.num_replicas)  # type: ignore[arg-type]


class ShardedSampler(_ShardingBase, Sampler):
    """Shard a user's sampler across ranks without replacing it.

    Every rank draws the user sampler's full order under the same seed (``seed + epoch``),
    pads it to a multiple of the world size and keeps ``order[rank::world]``: the ranks' shares
    are disjoint and together are exactly what the user's sampler would have produced. The
    order is drawn as it is consumed, so a sampler of 10**10 samples starts at once in
    bounded memory.
    """

    def __init__(self, sampler: Iterable[Any], num_replicas: int, rank: int, seed: int = 0) -> None:
        super().__init__(sampler, num_replicas, rank, seed)

    @property
    def sampler(self) -> Iterable[Any]:
        """The user's sampler."""
        return self.inner


class ShardedBatchSampler(_ShardingBase, Sampler):
    """Shard a user's batch sampler: rank r takes batches r, r+W, r+2W, ...

    Batches stay whole (the user built them deliberately, e.g. bucketed by length), so the
    per-rank batch is the user's batch and the global batch becomes W times larger.
    """

    def __init__(self, batch_sampler: Iterable[Sequence[Any]], num_replicas: int, rank: int, seed: int = 0) -> None:
        super().__init__(batch_sampler, num_replicas, rank, seed)

    @property
    def batch_sampler(self) -> Iterable[Sequence[Any]]:
        """The user's batch sampler."""
        return self.inner


class EpochDataLoader(DataLoader):
    """A DataLoader that advances its sampler's epoch by itself.

    Forgetting ``sampler.set_epoch(epoch)`` is the classic DDP bug (every epoch sees the same
    order); here each ``iter()`` uses ``next_epoch`` and then increments it, and since all ranks
    iterate the same number of times they agree on the epoch; a loader the script rebuilds goes
    on from the last one (``_passes``). The first iteration switches the RNGs to per-rank seeds.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rebuilt_as = _passes.key_of(call_site(), self.dataset)
        self.next_epoch = _passes.next_pass(self.rebuilt_as, self.dataset)

    def __iter__(self) -> Any:
        targets: list[Any] = []
        for candidate in (self.sampler, self.batch_sampler):
            has_set_epoch = callable(getattr(candidate, "set_epoch", None))
            if has_set_epoch and all(candidate is not seen for seen in targets):
                targets.append(candidate)
        for target in targets:
            target.set_epoch(self.next_epoch)
        self.next_epoch += 1
        _passes.record_pass(self.rebuilt_as, self.dataset, self.next_epoch)
        _seed.switch_to_rank_seeds()
        return super().__iter__()


def _default(name: str) -> Any:
    """DataLoader's own default for an argument the caller did not pass."""
    return DATALOADER_SIGNATURE.parameters[name].default


def distributed_loader(*args: Any, per_process_batch: bool = False, only_when_training: bool = False, **kwargs: Any) -> Any:
    """Drop-in for ``DataLoader(...)`` that shards the data across DDP ranks.

    * ``only_when_training=True``: for a loader whose role only the run can tell; each pass
      decides, sharded when it trains (``RunTimeRoleLoader``).

    * One process: returns ``DataLoader(*args, **kwargs)`` untouched.
    * Default: the global batch is kept, so each rank loads ``batch_size // world_size``
      (ValueError if it does not divide); ``per_process_batch=True`` keeps ``batch_size`` per
      rank instead (global batch ``batch_size * world_size``).
    * No sampler: a ``DistributedSampler`` honouring ``shuffle`` and ``drop_last``.
    * A user ``sampler``/``batch_sampler``: kept and sharded (``ShardedSampler`` /
      ``ShardedBatchSampler``), never silently replaced.
    * ``IterableDataset``: cannot be sharded from outside; returned as a plain DataLoader with a
      warning, the dataset must split its stream by ``ddpify.rank()``/``ddpify.world_size()``.
    """
    world = world_size()
    if world <= 1:
        return DataLoader(*args, **kwargs)
    if only_when_training:
        return RunTimeRoleLoader(args, kwargs, per_process_batch)

    try:
        bound = DATALOADER_SIGNATURE.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"ddpify.distributed_loader: invalid DataLoader arguments: {exc}") from None
    arguments = dict(bound.arguments)
    dataset = arguments["dataset"]

    if isinstance(dataset, IterableDataset):
        _warn_once(
            "ddpify: the DataLoader reads an IterableDataset, which cannot be given a "
            "distributed sampler; every rank reads the full stream unless the dataset shards "
            "itself by ddpify.rank() / ddpify.world_size() (batch_size stays per process)."
        )
        return DataLoader(*args, **kwargs)

    this_rank = rank()
    sampler = arguments.get("sampler", _default("sampler"))
    batch_sampler = arguments.get("batch_sampler", _default("batch_sampler"))
    batch_size = arguments.get("batch_size", _default("batch_size"))

    if batch_sampler is not None:
        _warn_once(
            "ddpify: the DataLoader uses a custom batch_sampler; each rank takes whole batches "
            f"from it, so the per-process batch is the sampler's batch and the effective global "
            f"batch is {world} times larger than in the single-process script."
        )
        arguments["batch_sampler"] = ShardedBatchSampler(batch_sampler, world, this_rank)
    else:
        if batch_size is not None:
            if per_process_batch:
                _print_once(f"ddpify: per-process batch {batch_size} x {world} processes = effective batch {batch_size * world}")
            elif batch_size % world != 0:
                raise ValueError(
                    f"batch_size {batch_size} is not divisible by world size {world}; use a "
                    f"multiple of {world} or convert with --per-process-batch"
                )
            else:
                arguments["batch_size"] = batch_size // world

        if sampler is None:
            arguments["sampler"] = DistributedSampler(
                dataset,
                num_replicas=world,
                rank=this_rank,
                shuffle=bool(arguments.pop("shuffle", _default("shuffle"))),
                drop_last=bool(arguments.get("drop_last", _default("drop_last"))),
                seed=0,
            )
            told = keep_batches_full(arguments, batch_size, len(arguments["sampler"]))
            if told is not None:
                _print_once(told)
        else:
            arguments["sampler"] = ShardedSampler(sampler, world, this_rank)

    _cap_workers(arguments)
    loader = EpochDataLoader(**arguments)
    loader.single_process_arguments = (args, kwargs)
    loader.per_process_batch = per_process_batch  # read by ddpify verify, with the arguments above
    return loader


def shard(loader: Any, *, per_process_batch: bool = False, only_when_training: bool = False) -> Any:
    """The same loader with a distributed sampler, for a ``DataLoader`` built where ddpify
    cannot rewrite it (a helper in another file).

    Rebuilt through :func:`distributed_loader` from the loader's own arguments, so both behave
    alike (global batch split across ranks, num_workers capped, auto-advancing epochs, a
    user's sampler or batch sampler kept and sharded; a subclass that only changes how a
    DataLoader is built is rebuilt as a plain one, its own attributes carried over; a batch too
    small to split keeps the per-process batch). Returned unchanged: with one process, when it
    is already sharded, and (with a warning) for an ``IterableDataset``, another ``DataLoader``
    subclass, a generator or another one-pass iterator. Any other iterable of
    batches (a project's own batch iterator class) comes back as ``ShardedBatches``: each batch
    cut across the ranks (``ddpify.runtime._batches``).

    ``only_when_training=True``: sharded only for the passes that train (``RunTimeRoleLoader``),
    for a loader whose role only the run can tell. A dict, list or tuple of loaders (``{"train":
    ..., "val": ...}``) comes back as the same container, each loader in it sharded that way:
    its training loaders are sharded, its evaluation loaders still read the whole set.
    """
    if isinstance(loader, (dict, list, tuple)):
        shards = [
            shard(value, per_process_batch=per_process_batch, only_when_training=True) if isinstance(value, DataLoader) else value
            for value in _values(loader)
        ]
        return _refilled(loader, shards)
    if world_size() <= 1 or _is_sharded(loader):
        return loader
    if not rebuildable(loader):
        if reiterable_batches(loader):
            return ShardedBatches(loader, only_when_training=only_when_training)  # a project's own batch iterator
        if shard_held(loader, lambda held: shard(held, per_process_batch=per_process_batch)):
            return loader  # an object that keeps loaders and hands out their batches: sharded in place
        _warn_once(
            f"ddpify.shard: a {type(loader).__name__} is not a plain torch DataLoader and cannot be "
            "rebuilt without changing it; every rank reads all of its data. Give it "
            "sampler=DistributedSampler(dataset) where it is built."
        )
        return loader
    if isinstance(loader.dataset, IterableDataset):
        _warn_once(
            "ddpify.shard: the loader reads an IterableDataset, which cannot be given a "
            "distributed sampler; every rank reads the full stream unless the dataset shards "
            "itself by ddpify.rank() / ddpify.world_size()."
        )
        return loader
    arguments = loader_arguments(loader)
    batch = arguments.get("batch_size")
    if not per_process_batch and batch is not None and batch < world_size():
        _print_once(
            f"ddpify: a batch of {batch} does not split over {world_size()} processes: each takes its own (effective batch {batch * world_size()})"
        )
        per_process_batch = True
    if only_when_training:
        return RunTimeRoleLoader((), arguments, per_process_batch, plain=loader)
    rebuilt = distributed_loader(**arguments, per_process_batch=per_process_batch)
    for name, value in extra_state(loader).items():
        setattr(rebuilt, name, value)
    rebuilt._unsharded = loader
    return rebuilt


def _values(container: Any) -> list[Any]:
    return list(container.values()) if isinstance(container, dict) else list(container)


def _refilled(container: Any, values: list[Any]) -> Any:
    """A container of the same kind holding ``values`` (a Munch keeps its attribute access)."""
    if not isinstance(container, dict):
        return type(container)(values)
    refilled = copy.copy(container)
    refilled.update(zip(container, values, strict=True))
    return refilled


def _is_sharded(loader: Any) -> bool:
    """Already distributed: ours, or a loader given a DistributedSampler by hand."""
    return isinstance(loader, (EpochDataLoader, ShardedBatches)) or isinstance(getattr(loader, "sampler", None), DistributedSampler)


def _cap_workers(arguments: dict[str, Any]) -> None:
    """``num_workers`` is per process: N processes with ``os.cpu_count()`` workers each would
    oversubscribe the node N times. Cap it at this process's share of the cores."""
    workers = arguments.get("num_workers", _default("num_workers"))
    cores = os.cpu_count() or 1
    share = max(1, cores // max(1, detect_env().local_world_size))
    if workers > share:
        arguments["num_workers"] = share
        _print_once(f"ddpify: num_workers {workers} -> {share} per process ({cores} cores shared by the processes of this node)")


def unsharded(loader: Any) -> Any:
    """The same loader without the distributed sampler: every rank iterates the whole dataset.

    For evaluation code that runs over a *training* loader (accuracy on the training set): its
    metrics then cover the full data and agree on every rank, like ddpify's unsharded evaluation
    loaders. Built once per loader; a plain loader is returned as it is.
    """
    plain = getattr(loader, "_unsharded", None)  # built once; shard() sets the loader it rebuilt
    if plain is None:
        original = getattr(loader, "single_process_arguments", None)
        if original is None:
            return loader
        args, kwargs = original
        plain = loader._unsharded = DataLoader(*args, **kwargs)
    return plain


def set_epoch(loader: Any, epoch: int) -> None:
    """Make ``loader``'s next pass use ``epoch``'s shuffle; never fails on plain loaders."""
    if isinstance(loader, EpochDataLoader):
        loader.next_epoch = epoch
        return
    if callable(getattr(type(loader), "set_epoch", None)):  # a loader with its own (RunTimeRoleLoader)
        loader.set_epoch(epoch)
        return
    for attr in ("sampler", "batch_sampler"):
        target: Any = getattr(loader, attr, None)
        if callable(getattr(target, "set_epoch", None)):
            target.set_epoch(epoch)
            return


# ---------------------------------------------------------------- role decided at run time
class RunTimeRoleLoader:
    """A ``DataLoader`` stand-in that shards the passes that train, for loaders whose role only the run can tell: ``for x in loaders[phase]`` with the phase chosen
    at run time, a loader handed to code that both trains and evaluates. The converter cannot
    prove from the code whether such a loader feeds training, so it builds it with
    ``ddpify.distributed_loader(..., only_when_training=True)`` and each pass decides: a pass that
    starts while training (``_guard.training_now``: gradients on, a wrapped model in train mode)
    reads its shard of the data, any other pass (``model.eval()``, ``torch.no_grad()``) reads the
    whole dataset, as an evaluation loader does. Right whichever way the program goes: a
    training pass is sharded, an evaluation pass agrees on every rank, and with no wrapped model
    nothing is sharded (each rank would otherwise train its own model on its own data).

    Attributes (``dataset``, ``batch_size``, ``len()``) are those of the loader the last pass
    used; before any pass, of the plain one. The sharded loader is built on the first training
    pass (its batch must divide by the world size only when it trains)."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any], per_process_batch: bool, plain: Any = None) -> None:
        self._arguments = (args, kwargs, per_process_batch)
        self._plain = plain if plain is not None else DataLoader(*args, **kwargs)
        self._sharded: Any = None
        self._current: Any = self._plain
        self._epoch: int | None = None

    def __iter__(self) -> Any:
        if training_now():
            if self._sharded is None:
                args, kwargs, per_process_batch = self._arguments
                self._sharded = distributed_loader(*args, per_process_batch=per_process_batch, **kwargs)
                if self._epoch is not None:
                    set_epoch(self._sharded, self._epoch)
            self._current = self._sharded
        else:
            self._current = self._plain
        return iter(self._current)

    def __len__(self) -> int:
        return len(self._current)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._current, name)

    def set_epoch(self, epoch: int) -> None:
        """The epoch the training passes shuffle for (``ddpify.set_epoch`` calls it)."""
        self._epoch = epoch
        if self._sharded is not None:
            set_epoch(self._sharded, epoch)
