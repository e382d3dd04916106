"""How many sharded passes each dataset has had, across the loaders built over it.

A script that builds its loader anew every epoch (``for epoch in ...: loader = DataLoader(ds,
...)``, a loader per task or per split) gives each new ``DistributedSampler`` epoch 0: without a
``set_epoch`` after the rebuild every epoch replays the same order. Here a new loader over a
dataset, built by the same line of the script as an earlier one, starts at the pass after that
loader's last, so it reshuffles whichever way the script builds it. Every rank builds and
iterates its loaders alike, so the ranks agree on the count; an explicit ``ddpify.set_epoch``
still decides. Loaders of other lines over the same dataset keep their own counts (two loaders
read side by side stay independent, as in the one-process run).
"""

from __future__ import annotations

import collections
import weakref
from typing import Any

from ._process_group import rank, world_size

# (the line that builds the loader, rank, world size, id(dataset)): the rank is part of the key
# for tests that play several ranks in one process
Key = tuple[str, int, int, int]
# key -> (a weak reference to the dataset, the pass a new loader over it starts at)
_next: dict[Key, tuple[weakref.ref[Any], int]] = {}
# datasets that take no weak reference (a plain list), held strongly: the last few only
_held: collections.OrderedDict[Key, tuple[Any, int]] = collections.OrderedDict()
_HELD_AT_MOST = 8


def key_of(site: str, dataset: Any) -> Key:
    return (site, rank(), world_size(), id(dataset))


def next_pass(key: Key, dataset: Any) -> int:
    weak = _next.get(key)
    if weak is not None and weak[0]() is dataset:
        return weak[1]
    held = _held.get(key)
    return held[1] if held is not None and held[0] is dataset else 0


def record_pass(key: Key, dataset: Any, following: int) -> None:
    """The next loader of that line over ``dataset`` starts at pass ``following``."""
    try:
        reference = weakref.ref(dataset, lambda _gone: _next.pop(key, None))
    except TypeError:
        _held[key] = (dataset, following)
        _held.move_to_end(key)
        while len(_held) > _HELD_AT_MOST:
            _held.popitem(last=False)
        return
    _next[key] = (reference, following)
