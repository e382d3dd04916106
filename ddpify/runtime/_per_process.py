"""Values each process would make for itself, made once for the job: a temporary folder every
rank shares, a device option (``--device cuda:0``) turned into each rank's own GPU, and rank
0's answer to a test of shared state (``agreed``)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any, Optional, TypeVar

import torch
import torch.distributed as dist

from ._process_group import barrier, device, device_name, is_distributed, is_main_process, setup, world_size

T = TypeVar("T")

__all__ = ["shared_mkdtemp", "shared_temporary_directory", "device_from", "agreed"]


def _joined() -> bool:
    """Whether this process is one of several: joins the process group first when the launcher
    started several and the script has not yet (module-level code above the ``__main__`` block)."""
    if world_size() > 1 and not is_distributed():
        setup()
    return is_distributed()


def _from_rank_zero(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (``broadcast_object_list``); ``value`` itself without a group."""
    if not is_distributed():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def agreed(value: T) -> T:
    """Rank 0's ``value`` on every rank. For a test of state the ranks share, asked at set-up
    (``if ddpify.agreed(os.path.exists(log_dir)):`` before one branch removes the folder and
    another creates it): each rank alone would ask at its own moment, and one that asks after
    another created the folder takes the other branch. Every rank must call it; one process:
    ``value``."""
    return _from_rank_zero(value) if _joined() else value


def shared_mkdtemp(suffix: Optional[str] = None, prefix: Optional[str] = None, dir: Optional[str] = None) -> str:  # noqa: A002
    """``tempfile.mkdtemp`` on rank 0, its name given to every rank: the folder rank 0 writes
    checkpoints into is the one the other ranks read from (one machine, or ``dir`` on a
    filesystem all machines share). Every rank must call it; one process: plain ``mkdtemp``."""
    joined = _joined()
    name = tempfile.mkdtemp(suffix, prefix, dir) if is_main_process() or not joined else None
    return str(_from_rank_zero(name))


@contextlib.contextmanager
def shared_temporary_directory(
    suffix: Optional[str] = None,
    prefix: Optional[str] = None,
    dir: Optional[str] = None,
    ignore_cleanup_errors: bool = False,  # noqa: A002
) -> Iterator[str]:
    """``with tempfile.TemporaryDirectory() as d:`` made once for the job: rank 0 creates the
    folder, every rank gets its name, and rank 0 removes it after every rank has left the
    block (a barrier), so no rank loses files it is still reading. One process: the plain
    ``TemporaryDirectory``."""
    if not _joined():
        with tempfile.TemporaryDirectory(suffix, prefix, dir, ignore_cleanup_errors) as name:
            yield name
        return
    name = shared_mkdtemp(suffix, prefix, dir)
    try:
        yield name
    finally:
        barrier()
        if is_main_process():
            shutil.rmtree(name, ignore_errors=ignore_cleanup_errors)


def device_from(value: Any) -> Any:
    """The device a ``--device`` / ``--gpu`` option names, made per rank: under a launcher, a
    CUDA device (``"cuda"``, ``"cuda:0"``, ``torch.device("cuda", 0)``, a GPU index) becomes this
    rank's own, ``ddpify.device()`` (as text, ``device_name()``, where it was given as text); anything else (``"cpu"``, ``"mps"``, a negative index for
    "no GPU") comes back as given, and so does every value with one process, so
    ``python train.py --device cuda:1`` still means GPU 1."""
    if world_size() <= 1 or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return device() if value >= 0 else value
    try:
        kind = torch.device(value).type
    except (RuntimeError, TypeError, ValueError):
        return value
    if kind != "cuda":
        return value
    return device_name() if isinstance(value, str) else device()  # a string stays a string: `"cuda" in args.device`
