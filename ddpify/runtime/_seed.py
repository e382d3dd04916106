"""Seeding that is identical across ranks for model init, then per-rank for training.

DDP needs two opposite things from the RNG: every rank must build the *same* initial model
(and the same RNG-generated data), but augmentation, dropout masks and DataLoader worker seeds
must *differ* between ranks, or every rank applies identical noise and the extra processes add
less information. ``seed`` gives the first; ``switch_to_rank_seeds``, triggered by the first
iteration over a distributed loader, gives the second.
"""

from __future__ import annotations

import contextlib
import operator
import zlib
from collections.abc import Iterator
from typing import Any

import torch

from . import _rng_records
from ._guard import call_site
from ._process_group import barrier_at, is_distributed, is_main_process, rank, world_size
from ._rng_records import SeedFn

__all__ = ["seed", "switch_to_rank_seeds", "main_process_first", "rank_generator", "rank_random"]

_switched = False


def seed(seed_fn: SeedFn, value: Any) -> None:
    """Call ``seed_fn(value)`` now, identically on every rank, and remember it for the switch.

    ``seed_fn`` is e.g. ``torch.manual_seed``, ``random.seed`` or ``numpy.random.seed``.
    Re-seeding later (say, per epoch) makes ranks identical again, so it also re-arms the
    per-rank switch for the next loader iteration.
    """
    global _switched
    seed_fn(value)
    _rng_records.record(seed_fn, value)
    _switched = False


def _rank_seed(value: Any, offset: int) -> int:
    """``(value + offset) mod 2**32``; 2**32 because numpy.random.seed rejects anything larger."""
    try:
        base = operator.index(value)
    except TypeError:
        try:
            base = int(value)
        except (TypeError, ValueError):
            # random.seed accepts strings/bytes; derive a stable integer from them.
            base = zlib.crc32(repr(value).encode("utf-8"))
    return (base + offset) % 2**32


def switch_to_rank_seeds() -> None:
    """Re-seed every recorded RNG with ``value + rank`` on ranks > 0, once, when training data
    starts flowing. Rank 0 continues its stream rather than replaying the one used for init.

    Called by ``EpochDataLoader`` on its first iteration. Does nothing with a single process
    (plain ``python`` runs must reproduce the original script bit for bit) or if already done.
    """
    global _switched
    if _switched or world_size() <= 1:
        return
    offset = rank()
    if offset:  # rank 0 keeps its stream, exactly where the single-process run would be
        for fn, value in _rng_records.records:
            fn(_rank_seed(value, offset))
    _switched = True


_first_depth = 0  # main_process_first blocks this process is inside now


@contextlib.contextmanager
def main_process_first() -> Iterator[None]:
    """Run the body on rank 0 first, then on the others (dataset downloads, cache building).

    Rank 0 releases the others even if its body raises, so they fail on their own instead of
    hanging until the collective timeout. A block entered inside another one at run time (a
    download helper called from a download block) is a no-op: the outer block already runs
    all of it on rank 0 first, while its own barriers would meet the outer block's barriers
    of the other ranks at a different site (every rank then stopped by the site check) or,
    unchecked, pair with them and release the others halfway through rank 0's outer body.
    """
    global _first_depth
    if not is_distributed() or _first_depth:
        yield
        return
    site = call_site(1)
    main = is_main_process()
    if not main:
        barrier_at("ddpify.main_process_first", site)
    _first_depth += 1
    try:
        yield
    finally:
        _first_depth -= 1
        if main:
            barrier_at("ddpify.main_process_first", site)


_generators: dict[str, Any] = {}


def rank_generator(device: Any = None) -> Any:
    """A ``torch.Generator`` of this rank's own, for random draws that pick training batches
    (``torch.randint(n, (batch,), generator=ddpify.rank_generator())``): with one generator
    shared by every rank, all ranks would draw the same batches. Seeded once with the base
    seed (the last ``ddpify.seed(torch.manual_seed, s)``, else ``torch.initial_seed()``) + rank,
    so runs repeat; the same object on every call. ``None`` with one process: the draw then
    uses the default generator, exactly like the original script."""
    if world_size() <= 1:
        return None

    where = str(torch.device(device)) if device is not None else "cpu"
    found = _generators.get(where)
    if found is None:
        base = next((value for fn, value in _rng_records.records if fn is torch.manual_seed), None)
        found = torch.Generator(device=where)
        found.manual_seed(_rank_seed(base if base is not None else torch.initial_seed(), rank()))
        _generators[where] = found
    return found


_streams: dict[str, Any] = {}


def rank_random(module: Any, *, when_training: bool = False) -> Any:
    """This rank's own stream of ``numpy.random``'s or ``random``'s module functions, for draws
    that pick training batches (``ddpify.rank_random(np.random).choice(n, batch)``): every rank
    would otherwise draw the same indices. A ``numpy.random.RandomState`` / ``random.Random``
    seeded once with the module's base seed (the last ``ddpify.seed(np.random.seed, s)``, else
    the seed every rank started from) + rank: the same object on every call. ``module`` itself
    with one process (the original draws, bit for bit), and with ``when_training`` while
    gradients are off (evaluation then draws the same batches on every rank)."""
    if world_size() <= 1 or when_training and not torch.is_grad_enabled():
        return module
    name = module.__name__
    found = _streams.get(name)
    if found is None:
        base = next((value for fn, value in _rng_records.records if fn == module.seed), None)
        value = _rank_seed(base if base is not None else torch.initial_seed(), rank())
        found = _streams[name] = module.RandomState(value) if name == "numpy.random" else module.Random(value)
    return found
