"""Barriers that know where every rank is.

A ``ddpify.save`` behind ``if rank == 0:`` is reached by one rank only: a plain barrier then
waits for the group timeout (30 minutes), or worse, pairs with another barrier of the other
ranks and the run goes on out of step. Before its real barrier every barrier the runtime
inserts first meets the other ranks in the process group's key-value store, each rank saying
where it is, so a rank that reached a *different* ddpify barrier, or ended, is named at once:
"ranks [1] did not reach ddpify.save at train.py:212 — is it behind a rank test? ...".
A rank that is merely slower is waited for, up to the group timeout (DDPIFY_BARRIER_TIMEOUT).

Backend-independent (gloo and nccl alike); a handful of store round trips (~0.1 ms each) per
barrier, and barriers are rare (saves, the end of the run). Polling, not ``store.wait``, whose
timeouts log a warning each.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
import zlib
from typing import Any, Optional

import torch.distributed as dist

from ._guard import GuardError

__all__ = ["arrive", "check_visible", "mark_ended", "defer_exit_marker", "use_group_timeout"]

BARRIER_TIMEOUT_ENV_VAR = "DDPIFY_BARRIER_TIMEOUT"
DEFAULT_TIMEOUT_S = 1800.0  # torch's default timeout of a gloo or nccl group
VISIBLE_WAIT_S = 5.0  # how long a rank looks for a file just saved (network filesystems cache lookups)
END_OF_RUN = "the end of"  # the barriers that close a run are named "the end of ..."

_HINTS = {
    "ddpify.save": "use torch.save there (ddpify.save already writes on rank 0 only, and waits for every rank)",
    "ddpify.barrier": "call it on every rank",
    "ddpify.main_process_first": "enter it on every rank",
}
# The group the sequence counts barriers of, the store, and how this process marks its end.
_state: dict[str, Any] = {
    "world": None,
    "generation": 0,
    "sequence": 0,
    "store": None,
    "exit_hook": False,
    "deferred": False,
    "timeout": None,
}


def _store() -> Any:
    """The default group's store, or None (no group, or a torch without the private accessor)."""
    try:
        return dist.distributed_c10d._get_default_store()
    except Exception:
        return None


def _namespace() -> str:
    """Keys of this process group: a new group (init after destroy) starts counting again."""
    world = dist.group.WORLD
    if _state["world"] is not world:
        _state.update(world=world, generation=_state["generation"] + 1, sequence=0)
    return f"ddpify/{_state['generation']}/"


def barrier_timeout() -> float:
    """DDPIFY_BARRIER_TIMEOUT seconds, else the group's timeout given to ``setup`` (argument or
    DDPIFY_INIT_TIMEOUT), else torch's default: a slow rank is never failed sooner than the
    plain barrier would have failed it."""
    raw = os.environ.get(BARRIER_TIMEOUT_ENV_VAR, "").strip()
    try:
        return float(raw) if raw else (_state["timeout"] or DEFAULT_TIMEOUT_S)
    except ValueError:
        raise RuntimeError(f"ddpify: {BARRIER_TIMEOUT_ENV_VAR}={raw!r} is not a number of seconds.") from None


def use_group_timeout(timeout_s: Optional[float]) -> None:
    """``setup`` tells the group's timeout (None: torch's default)."""
    _state["timeout"] = timeout_s


def _missed(ranks: list[int], what: str, site: str) -> str:
    return f"ranks {ranks} did not reach {what} at {site} — is it behind a rank test? {_HINTS.get(what, 'reach it on every rank')}"


def arrive(what: str, site: str, timeout_s: Optional[float] = None) -> None:
    """Meet every rank at this rank's next ddpify barrier (``what`` at ``site``).

    Raises GuardError naming the ranks that are elsewhere: at once when they reached another
    ddpify barrier or ended, after ``timeout_s`` (default: ``barrier_timeout()``) otherwise.
    """
    store = _store()
    if store is None:
        return
    space = _namespace()
    key = f"{space}{_state['sequence']}/"
    _state["sequence"] += 1
    _state["store"] = store
    _arm_exit_marker()
    rank, world = dist.get_rank(), dist.get_world_size()
    here = f"{what} at {site}"
    store.set(f"{key}at/{rank}", here)
    same_place = f"{key}site/{zlib.crc32(here.encode())}"
    store.add(same_place, 1)
    if store.add(f"{key}count", 1) == world:
        store.set(f"{key}done", "1")
    _wait(store, key, space, world, what, site, barrier_timeout() if timeout_s is None else timeout_s)
    if store.add(same_place, 0) != world:
        raise _mismatch(store, key, world)


def _wait(store: Any, key: str, space: str, world: int, what: str, site: str, timeout_s: float, until: str = "done") -> None:
    """Poll until ``key + until`` is set (every rank arrived); look for ranks that ended now and then."""
    started = time.monotonic()
    next_look = started + 0.5
    delay = 0.0005
    while not store.check([f"{key}{until}"]):
        now = time.monotonic()
        if now >= next_look:
            next_look = now + 1.0
            ended = _ended(store, space, world)
            gone = {r: how for r, how in ended.items() if not store.check([f"{key}at/{r}"])}
            if gone:
                reasons = "; ".join(f"rank {r} {how}" for r, how in sorted(gone.items()))
                raise GuardError(f"ddpify: {_missed(sorted(gone), what, site)} ({reasons})", "hang")
        if now - started > timeout_s:
            missing = [r for r in range(world) if not store.check([f"{key}at/{r}"])]
            raise GuardError(
                f"ddpify: {_missed(missing, what, site)} (waited {timeout_s:.0f} s; or is a rank stuck in a collective "
                f"the others skipped? {BARRIER_TIMEOUT_ENV_VAR} sets this limit)",
                "hang",
            )
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _ended(store: Any, space: str, world: int) -> dict[int, str]:
    """Ranks that marked their end, with how (one round trip when none did)."""
    if store.add(f"{space}ended", 0) == 0:
        return {}
    return {r: store.get(f"{space}ended/{r}").decode() for r in range(world) if store.check([f"{space}ended/{r}"])}


def _mismatch(store: Any, key: str, world: int) -> GuardError:
    """Every rank arrived, but not at the same barrier: name the one some ranks skipped."""
    groups: dict[str, list[int]] = {}
    for r in range(world):
        groups.setdefault(store.get(f"{key}at/{r}").decode(), []).append(r)
    candidates = [here for here in groups if not here.startswith(END_OF_RUN)] or list(groups)
    skipped = min(candidates, key=lambda here: (len(groups[here]), 0 not in groups[here]))
    others = sorted(r for r in range(world) if r not in groups[skipped])
    what, _, site = skipped.rpartition(" at ")
    elsewhere = "; ".join(f"ranks {ranks} reached {here}" for here, ranks in groups.items() if here != skipped)
    return GuardError(f"ddpify: {_missed(others, what, site)} ({elsewhere} instead)", "hang")


def check_visible(path: str, what: str, site: str) -> None:
    """After a save's barrier: every rank must see the file rank 0 wrote, else all ranks raise
    (machines without a shared filesystem: a later load on another rank finds nothing).

    Each rank looks for rank 0's absolute path, not for the path it named itself: ranks that
    compute the name separately (a "next free file name" loop run after rank 0 already wrote
    ``ckpt_0.pt`` gives ``ckpt_1.pt`` elsewhere) are a correct program, and the file a rank
    named is its own business, while "does rank 0's file reach this rank" is the question only
    a shared folder answers yes. A per-process folder on one machine therefore passes here; a
    rank that later reads its own missing name fails there, at the read.
    """
    store = _store()
    if store is None:
        return
    space = _namespace()
    key = f"{space}{_state['sequence'] - 1}/seen/"  # the barrier every rank just passed
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        store.set(f"{key}writer", os.path.abspath(path))
    _wait(store, key, space, world, what, site, barrier_timeout(), until="writer")
    writer = store.get(f"{key}writer").decode()
    if not _visible(writer):
        store.set(f"{key}{rank}", "blind")
        store.add(f"{key}missing", 1)
    if store.add(f"{key}count", 1) == world:
        store.set(f"{key}done", "1")
    _wait(store, key, space, world, what, site, barrier_timeout())
    if store.add(f"{key}missing", 0):
        blind = [r for r in range(world) if store.check([f"{key}{r}"])]
        raise GuardError(
            f"ddpify: {what} at {site}: rank 0 wrote {writer}, but ranks {blind} cannot see it: the ranks do not share "
            f"this folder (machines without a shared filesystem, or a folder local to each machine). Save into a "
            f"folder every rank sees.",
            "checkpoints",
        )


def _visible(path: str) -> bool:
    """Whether ``path`` exists here, looking again for a few seconds: listing the folder makes
    a network filesystem drop its cached "no such file"."""
    deadline = time.monotonic() + VISIBLE_WAIT_S
    delay = 0.05
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        try:
            os.listdir(os.path.dirname(os.path.abspath(path)))
        except OSError:
            pass
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
    return True


def mark_ended(how: str) -> None:
    """Tell ranks waiting in a ddpify barrier that this one will not come (first mark wins)."""
    store = _state["store"] or _store()
    if store is None or _state["world"] is None:
        return
    try:
        space = f"ddpify/{_state['generation']}/"
        rank = dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", "0"))
        if not store.check([f"{space}ended/{rank}"]):
            store.set(f"{space}ended/{rank}", how)
            store.add(f"{space}ended", 1)
    except Exception:
        pass  # the store may be gone already; the others then wait for their timeout


def defer_exit_marker() -> None:
    """The runtime's own exit handler waits for every rank first and marks the end after it."""
    _state["deferred"] = True


def _arm_exit_marker() -> None:
    if not _state["exit_hook"]:
        atexit.register(_mark_at_exit)
        _state["exit_hook"] = True


def _mark_at_exit() -> None:
    failed = getattr(sys, "last_value", None)
    if failed is None and _state["deferred"] and dist.is_available() and dist.is_initialized():
        return  # the runtime's exit handler meets the others in a barrier, then marks
    mark_ended(f"failed ({type(failed).__name__}: {failed})" if failed is not None else "ended")
