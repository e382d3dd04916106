"""Side effects that must happen once per job, not once per rank: checkpoints, prints, loggers."""

from __future__ import annotations

import builtins
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import torch

from . import _arrival
from ._guard import call_site, guards_enabled
from ._model import unwrap
from ._process_group import barrier_at, device, is_distributed, is_main_process

__all__ = ["save", "load", "print", "rank_zero", "NullObject"]


def _atomic_torch_save(obj: Any, path: str, *args: Any, **kwargs: Any) -> None:
    """torch.save into a temporary sibling file, then os.replace it into place.

    A crash (or a reader on another rank) can then never observe a half-written checkpoint; the
    sibling lives in the same directory so the rename stays on one filesystem and is atomic.
    ``open(..., "xb")`` rather than mkstemp so the file gets the usual umask permissions.
    """
    directory, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "xb") as fh:
            torch.save(obj, fh, *args, **kwargs)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def save(obj: Any, f: Any, *args: Any, wait: bool = True, **kwargs: Any) -> None:
    """``torch.save`` on the main process only, then a barrier so the file exists for all.

    Path targets are written atomically; file objects are written directly. A DDP or
    DataParallel model passed as ``obj``, or as a value of a dict ``obj`` (``{"net": net,
    "epoch": e}``), is unwrapped so the pickle does not depend on ``torch.distributed`` state
    when loaded and has the classes a single-process loader expects. A rank that never gets
    here (a save behind a rank test), or cannot see the file afterwards, is an error naming it.

    ``wait=False`` skips the barrier: for a save under a condition the ranks may decide
    differently (the clock, a metric of each rank's own shard), where the ranks that skip the
    branch would never reach the barrier and the others would hang in it. Rank 0 then writes
    when *it* takes the branch, and no rank may rely on the file existing afterwards.
    """
    site = call_site(1)
    obj = _unwrapped(obj)
    if isinstance(obj, dict) and any(_unwrapped(value) is not value for value in obj.values()):
        obj = type(obj)((key, _unwrapped(value)) for key, value in obj.items())
    if is_main_process():
        if isinstance(f, (str, os.PathLike)):
            _atomic_torch_save(obj, os.fspath(f), *args, **kwargs)
        else:
            torch.save(obj, f, *args, **kwargs)
    if wait:
        barrier_at("ddpify.save", site)
        if isinstance(f, (str, os.PathLike)) and is_distributed() and guards_enabled():
            _arrival.check_visible(os.fspath(f), "ddpify.save", site)


def _unwrapped(obj: Any) -> Any:
    if isinstance(obj, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)):
        return unwrap(obj)
    return obj


def load(f: Any, *args: Any, map_location: Any = None, **kwargs: Any) -> Any:
    """``torch.load`` onto this rank's device by default, so rank N does not deserialize every
    tensor onto cuda:0 (where rank 0 saved it) and exhaust that GPU."""
    if args:
        # map_location was passed positionally (torch.load's second parameter); keep it.
        return torch.load(f, *args, **kwargs)
    if map_location is None:
        map_location = device()
    return torch.load(f, map_location=map_location, **kwargs)


def print(*args: Any, **kwargs: Any) -> None:  # noqa: A001 - deliberately mirrors builtins.print
    """``print`` on the main process only, so logs are not repeated once per rank."""
    if is_main_process():
        builtins.print(*args, **kwargs)


class NullObject:
    """Stand-in for a logger/tracker on non-main ranks: absorbs every use and does nothing.

    Attribute access and calls return the object itself (``writer.add_scalar(...)``,
    ``run.log(...)``, ``wandb.run.summary.update(...)``), it works as a context manager that
    does not swallow exceptions, iterates as empty and is falsy (``if writer:`` skips work).
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> NullObject:
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        pass

    def __delattr__(self, name: str) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> NullObject:
        return self

    def __enter__(self) -> NullObject:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False

    def __getitem__(self, key: Any) -> NullObject:
        return self

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def __delitem__(self, key: Any) -> None:
        pass

    def __repr__(self) -> str:
        return "NullObject()"


def _null_factory(*args: Any, **kwargs: Any) -> NullObject:
    """What non-main ranks get instead of the real factory: it never runs the factory."""
    return NullObject()


def rank_zero(factory: Callable[..., Any]) -> Callable[..., Any]:
    """``ddpify.rank_zero(SummaryWriter)(log_dir)``: the real object on rank 0, a
    ``NullObject`` elsewhere, so loggers create one run/directory instead of one per rank. A
    tensorboard writer's folder is still made on every rank: the script may rely on it
    (pt.darts opened a log file in the folder ``SummaryWriter(log_dir=path + "/tb")`` made)."""
    if is_main_process():
        return factory
    return _null_writer if getattr(factory, "__name__", "") == "SummaryWriter" else _null_factory


def _null_writer(*args: Any, **kwargs: Any) -> NullObject:
    path = kwargs.get("log_dir") or kwargs.get("logdir") or (args[0] if args else None)
    if path and isinstance(path, (str, os.PathLike)) and "://" not in str(path):  # "": the writer's default; s3://
        os.makedirs(path, exist_ok=True)
    return NullObject()
