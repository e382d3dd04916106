"""The global RNG seeds this run has set, in call order, one entry per seeding function (the
latest value wins): what ``_seed.switch_to_rank_seeds`` re-seeds per rank once training data
flows. Below ``_process_group`` (which seeds the RNGs a script never seeds when it joins the
group) and ``_seed`` (``ddpify.seed``) alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SeedFn = Callable[[Any], Any]

records: list[tuple[SeedFn, Any]] = []


def record(seed_fn: SeedFn, value: Any) -> None:
    """Remember that ``seed_fn(value)`` was called (``random.seed`` is a new bound method at
    each attribute access: functions are compared with ``==``)."""
    for i, (fn, _old) in enumerate(records):
        if fn is seed_fn or fn == seed_fn:
            records[i] = (seed_fn, value)
            return
    records.append((seed_fn, value))


def recorded(seed_fn: SeedFn) -> bool:
    return any(fn is seed_fn or fn == seed_fn for fn, _ in records)
