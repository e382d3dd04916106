"""Process-group lifecycle and rank queries.

Every helper degrades to a single-process no-op when no launcher is present, so a converted
script run with plain ``python`` behaves exactly like the original.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import os
import random
import sys
from collections.abc import Iterator
from datetime import timedelta
from typing import Any, Optional

import torch
import torch.distributed as dist

from . import _arrival, _rng_records
from ._env import Env, detect_env, detect_launcher
from ._guard import call_site, guards_enabled, note
from ._hash_seed import restart_with_shared_hash_seed
from ._rendezvous import rendezvous_defaults

__all__ = [
    "setup",
    "teardown",
    "distributed",
    "is_distributed",
    "rank",
    "local_rank",
    "world_size",
    "is_main_process",
    "device",
    "device_name",
    "DeviceName",
    "barrier",
    "barrier_at",
]

TIMEOUT_ENV_VAR = "DDPIFY_INIT_TIMEOUT"
# Set to 1 to keep ``print`` on every rank (``_print_on_rank_zero``), e.g. to debug one rank.
PRINT_ENV_VAR = "DDPIFY_PRINT_ALL_RANKS"

_atexit_registered = False


def _group_ready() -> bool:
    """True when a default process group exists (torch builds without distributed have none)."""
    return dist.is_available() and dist.is_initialized()


def _timeout_from_env() -> Optional[float]:
    """Read DDPIFY_INIT_TIMEOUT so the timeout can be tuned without editing the script."""
    raw = os.environ.get(TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise RuntimeError(f"ddpify: {TIMEOUT_ENV_VAR}={raw!r} is not a number of seconds.") from None
    if value <= 0:
        raise RuntimeError(f"ddpify: {TIMEOUT_ENV_VAR}={raw!r} must be a positive number of seconds.")
    return value


def setup(timeout_s: Optional[float] = None, *, same_string_hashes: bool = False) -> None:
    """Join the process group described by the launcher; safe to call any number of times.

    With one process nothing happens at all (not even ``torch.cuda.set_device``), so a plain
    ``python train.py`` run keeps the original script's behaviour. With CUDA the backend is
    ``"cpu:gloo,cuda:nccl"`` so collectives on CPU tensors (metrics, barriers) work as well.
    ``timeout_s`` (or the DDPIFY_INIT_TIMEOUT environment variable, in seconds) bounds how long
    the rendezvous and collectives wait for slow or dead peers; the argument wins over the
    variable, and without either PyTorch's default applies. Under srun or mpirun, MASTER_ADDR
    and MASTER_PORT are derived from the job when unset (see ``_rendezvous``).
    ``same_string_hashes``: code the conversion could not rewrite orders a set of strings, so
    each rank first restarts with one string-hash seed (``_hash_seed``).
    """
    global _atexit_registered
    launcher, env = detect_launcher()
    if env.world_size <= 1 or _group_ready():
        return
    if same_string_hashes:
        restart_with_shared_hash_seed()
    if not dist.is_available():
        raise RuntimeError(
            f"ddpify: this PyTorch build has no torch.distributed support, so it cannot run with WORLD_SIZE={env.world_size}."
        )
    if timeout_s is None:
        timeout_s = _timeout_from_env()

    if torch.cuda.is_available():
        # Before init so NCCL binds this process to its own GPU instead of all using cuda:0.
        torch.cuda.set_device(env.local_rank)
        backend = "cpu:gloo,cuda:nccl"
    else:
        backend = "gloo"

    # srun and mpirun name no rendezvous; every rank derives the same one (see _rendezvous).
    os.environ.update(rendezvous_defaults(launcher, env, os.environ))
    kwargs: dict[str, Any] = {}
    if timeout_s is not None:
        kwargs["timeout"] = timedelta(seconds=timeout_s)
    _arrival.use_group_timeout(timeout_s)
    dist.init_process_group(
        backend=backend,
        init_method="env://",
        rank=env.rank,
        world_size=env.world_size,
        **kwargs,
    )
    _share_unseeded_rngs(env.rank)
    _print_on_rank_zero(env.rank)
    if not _atexit_registered:
        # Scripts that never call teardown() still exit cleanly (and without NCCL warnings).
        atexit.register(_teardown_at_exit)
        _arrival.defer_exit_marker()
        _atexit_registered = True


def _print_on_rank_zero(rank: int) -> None:
    """On the ranks other than 0, ``print`` to the terminal (stdout or stderr) prints nothing:
    the lines of every module -- the script's, its project's (``networks.py`` printing a model's
    size), a library's -- appear once per job, as the one-process original printed them;
    ``ddpify.print`` is the explicit spelling of the same. ``print(..., file=f)`` into any other
    file still writes. Errors still reach stderr through their tracebacks; DDPIFY_PRINT_ALL_RANKS=1
    keeps every rank's prints (to debug one rank)."""
    if rank == 0 or os.environ.get(PRINT_ENV_VAR) == "1":
        return
    terminal = builtins.print

    def print_elsewhere(*args: Any, **kwargs: Any) -> None:
        stream = kwargs.get("file")
        if stream is not None and stream not in (sys.stdout, sys.stderr):
            terminal(*args, **kwargs)

    builtins.print = print_elsewhere


def _share_unseeded_rngs(rank: int) -> None:
    """Start each global RNG (torch, random, numpy) the script has not seeded yet from one seed
    drawn on rank 0, on every rank: what the script draws before training (a generated dataset,
    an unseeded train/valid split, a model DDP would broadcast anyway) is then the same on every
    rank, as in the one-process run, instead of each rank drawing its own from the OS. Recorded
    like ``ddpify.seed``, so these RNGs still switch to per-rank streams when training data flows."""
    numpy = sys.modules.get("numpy")  # a script drawing from numpy has imported it
    seeders = [torch.manual_seed, random.seed, *([numpy.random.seed] if numpy is not None else [])]
    unseeded = [fn for fn in seeders if not _rng_records.recorded(fn)]
    if not unseeded:
        return
    drawn = [int.from_bytes(os.urandom(4), "little") if rank == 0 else None]
    dist.broadcast_object_list(drawn, src=0)
    for fn in unseeded:
        fn(drawn[0])
        _rng_records.record(fn, drawn[0])


def _teardown_at_exit() -> None:
    """``teardown`` for the end of the interpreter, as ``distributed()`` does it: after a normal
    end every rank waits for the others first (see ``distributed``); after an uncaught
    exception (``sys.last_value``, set before exit handlers run) it does not wait, because
    the other ranks may never get there."""
    failed = getattr(sys, "last_value", None)
    try:
        if failed is None:
            barrier_at("the end of the run (ddpify's exit handler)", "exit")
    finally:
        _arrival.mark_ended(f"failed ({type(failed).__name__}: {failed})" if failed is not None else "ended")
        teardown()


def teardown() -> None:
    """Destroy the default process group if there is one; idempotent so atexit may call it too."""
    if _group_ready():
        dist.destroy_process_group()


@contextlib.contextmanager
def distributed(timeout_s: Optional[float] = None, *, same_string_hashes: bool = False) -> Iterator[Env]:
    """``with ddpify.distributed(): main()`` -- set up (see ``setup``), and tear down even if
    training raises, so a crashing rank does not leave its peers blocked on a half-dead group."""
    setup(timeout_s, same_string_hashes=same_string_hashes)
    site = call_site(1)
    try:
        yield detect_env()
    except BaseException as failed:
        _arrival.mark_ended(f"failed ({type(failed).__name__}: {failed})")  # ranks waiting for this one stop now
        teardown()  # no barrier: the other ranks may never get there
        raise
    # All ranks done talking before any closes its connections: gloo aborts a rank ("terminate
    # called without an active exception") whose peer closed first while messages were in flight.
    try:
        barrier_at("the end of ddpify.distributed()", site)
    finally:
        _arrival.mark_ended("ended")
        teardown()


def is_distributed() -> bool:
    """True only while a process group with more than one member is live."""
    return _group_ready() and dist.get_world_size() > 1


def rank() -> int:
    """Global rank: from the live group if any, else from the launcher variables (0 without)."""
    if _group_ready():
        return dist.get_rank()
    return detect_env().rank


def local_rank() -> int:
    """Rank within this node, which selects the GPU; 0 without a launcher."""
    return detect_env().local_rank


def local_rank_argument(default: Any) -> Any:
    """Default for a script's own ``--local_rank`` option (written for torch.distributed.launch).

    Under a launcher it is the real local rank (torchrun passes no ``--local_rank``); with no
    launcher it stays the script's own default, so checks such as ``if args.local_rank != -1``
    keep meaning "not distributed".
    """
    env = detect_env()
    return env.local_rank if env.world_size > 1 else default


def world_size() -> int:
    """Number of processes: from the live group if any, else from the launcher (1 without)."""
    if _group_ready():
        return dist.get_world_size()
    return detect_env().world_size


def is_main_process() -> bool:
    """True on global rank 0, the process that logs, prints and writes checkpoints."""
    return rank() == 0


def device() -> torch.device:
    """This process's device: ``cuda:<local_rank>`` when CUDA is usable, else ``cpu``."""
    if torch.cuda.is_available():
        return torch.device("cuda", local_rank())
    return torch.device("cpu")


class DeviceName(str):
    """This process's device as text (``"cuda:1"``), for a script that keeps its device as a
    string (``device = "cuda" if torch.cuda.is_available() else "cpu"``): torch takes it
    wherever it takes a device, ``"cuda" in device`` holds, and it equals the bare kind too
    (``device == "cuda"``), as the single-GPU script's ``"cuda"`` did; a ``torch.device`` in
    its place would break those string tests. It hashes as its own text (a dict keyed by
    ``"cuda"`` does not find it) and pickles as a plain string (a checkpoint saving the
    script's options loads without ddpify)."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str) and ":" not in other and ":" in self:
            return self.partition(":")[0] == str(other)
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return str, (str(self),)


def device_name() -> DeviceName:
    """``device()`` as text (``DeviceName``): what the converter writes for a string device."""
    return DeviceName(str(device()))


def barrier() -> None:
    """Wait for all ranks; a no-op without a live multi-process group. A rank that reached
    another ddpify barrier instead, or ended, is named at once (see ``_arrival``)."""
    barrier_at("ddpify.barrier", call_site(1))


def barrier_at(what: str, site: str) -> None:
    """The barriers the runtime inserts: ``what`` at ``site`` (``ddpify.save at train.py:212``)
    names the barrier in guard-rail errors and in ``ddpify verify``'s hang report."""
    if not is_distributed():
        return
    note("barrier", what=what, site=site, phase="enter")
    if guards_enabled():
        _arrival.arrive(what, site)
    dist.barrier()
    note("barrier", what=what, site=site, phase="exit")
