"""What the recorder's hooks share inside a rank: the rank's record file (:class:`Recorder`)
and where a call comes from (the user's own code, not torch, ddpify or installed packages)."""

from __future__ import annotations

import builtins
import json
import os
import sys
import sysconfig
import threading
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["DIR_ENV_VAR", "STEPS_ENV_VAR", "Recorder", "called_from_torch", "is_user_file", "user_frame", "where"]

DIR_ENV_VAR = "DDPIFY_VERIFY_DIR"
STEPS_ENV_VAR = "DDPIFY_VERIFY_STEPS"

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TORCH_DIR = os.path.dirname(torch.__file__)
# Code that is not the user's: torch, ddpify, the standard library, installed packages.
_NOT_USER = tuple(
    sorted({p for p in (_TORCH_DIR, _PACKAGE_DIR, *(sysconfig.get_paths().get(k) for k in ("stdlib", "purelib", "platlib"))) if p})
)
_real_open = builtins.open


def is_user_file(filename: str) -> bool:
    """A file of the user's project (not torch, ddpify, the standard library or a package)."""
    return not filename.startswith("<") and not filename.startswith(_NOT_USER)


def user_frame(depth: int = 1) -> Any:
    """The innermost frame of user code ``depth`` frames above the caller, or None."""
    try:
        frame: Any = sys._getframe(depth + 1)
    except ValueError:
        return None
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def where(frame: Any) -> str:
    """``train.py:40`` for a frame, ``?`` for none."""
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}" if frame is not None else "?"


def called_from_torch(depth: int = 1) -> bool:
    """Whether the caller of the caller is torch's own code (its internal saves, collectives)."""
    try:
        return sys._getframe(depth + 1).f_code.co_filename.startswith(_TORCH_DIR)
    except ValueError:
        return False


class Recorder:
    """One rank's record file and the counters the hooks share."""

    def __init__(self, folder: str, rank: int) -> None:
        self.folder = os.path.abspath(folder)
        self.rank = rank
        self.pid = os.getpid()
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        raw_steps = os.environ.get(STEPS_ENV_VAR, "").strip()
        self.stop_after: int | None = int(raw_steps) if raw_steps else None
        self.steps = 0  # steps of the main optimizer (the first one that stepped)
        self.passes = 0  # DataLoader passes started so far
        self.training = False  # a forward through a wrapper with gradients on, or a step, happened
        self.per_process_batches: set[int] = set()  # batch sizes of loaders that keep the per-process batch
        self.at_exit: list[Callable[[], None]] = []  # flushes of the hooks, run before "end"
        self._lock = threading.Lock()
        self._file = _real_open(os.path.join(self.folder, f"rank{rank}.jsonl"), "a", encoding="utf-8")

    def here(self) -> bool:
        """Only the rank's own process writes: not a forked or spawned DataLoader worker."""
        if os.getpid() != self.pid:
            return False
        import multiprocessing

        return multiprocessing.parent_process() is None

    def emit(self, event: str, **fields: Any) -> None:
        """Append one event and flush it, so a run killed for hanging keeps what it recorded."""
        if not self.here():
            return
        line = json.dumps({"e": event, **fields}, default=str)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def finish(self) -> None:
        """At exit: the hooks flush what they hold (open DataLoader passes, counts, parameter
        hashes), then the "end" event says this rank got there."""
        for flush in self.at_exit:
            try:
                flush()
            except Exception as exc:  # never turn the script's exit into a failure
                self.emit("recorder-error", where="exit", message=repr(exc))
        self.emit("end")
