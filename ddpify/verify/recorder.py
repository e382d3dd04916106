"""What runs inside every rank of a ``ddpify verify`` run.

``site/sitecustomize.py`` calls :func:`install` at interpreter start in each rank: hooks on
torch (``hooks_data``, ``hooks_model``, ``hooks_io``) write what the script does, as JSON lines,
to ``$DDPIFY_VERIFY_DIR/rank<R>.jsonl``; the parent reads them back (``records``) and judges.
The hooks only observe (they call the original with the original arguments and return its
result), with two exceptions a verify run asks for: an optimizer step past ``--steps`` ends the
run on every rank (SystemExit at the same step), and moving a wrapped model to another device
raises. The runtime reports what only it knows through :func:`note`.

Nothing here runs outside a verify run, and nothing is written into the user's files.
"""

from __future__ import annotations

import atexit
import builtins
import json
import os
import sys
import sysconfig
import threading
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["Recorder", "install", "note", "recorder", "user_frame", "where"]

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


_state: dict[str, Recorder | None] = {"recorder": None}


def recorder() -> Recorder | None:
    return _state["recorder"]


def note(kind: str, data: dict[str, Any]) -> None:
    """Called by ``ddpify.runtime`` (see ``_guard.note``): a barrier it inserts, a guard that fired."""
    current = _state["recorder"]
    if current is None:
        return
    if kind == "barrier":
        from ddpify.verify import hooks_io

        hooks_io.runtime_barrier(current, data)
    else:
        current.emit(kind, **data)


def _spawned_helper() -> bool:
    """A multiprocessing child (DataLoader worker under spawn/forkserver) has the rank's
    environment but is not a rank."""
    argv = " ".join(getattr(sys, "orig_argv", []))
    return "multiprocessing" in argv and ("spawn_main" in argv or "forkserver" in argv)


def install() -> None:
    """Start recording in this process if it is a rank of a verify run (idempotent)."""
    folder = os.environ.get(DIR_ENV_VAR)
    rank = os.environ.get("RANK")
    if not folder or rank is None or _state["recorder"] is not None or _spawned_helper():
        return
    current = _state["recorder"] = Recorder(folder, int(rank))
    current.emit("start", pid=current.pid, world=current.world, steps=current.stop_after)
    from ddpify.verify import hooks_data, hooks_io, hooks_model

    for hooks in (hooks_data, hooks_model, hooks_io):
        hooks.install(current)
    atexit.register(current.finish)  # registered first, so it runs last: after the script's own handlers
    previous = sys.excepthook

    def excepthook(kind: type, value: BaseException, traceback: Any) -> None:
        original = traceback
        user = None  # the innermost line of the user's own code
        while traceback is not None:
            if is_user_file(traceback.tb_frame.f_code.co_filename):
                user = traceback
            traceback = traceback.tb_next
        current.emit(
            "error",
            type=kind.__name__,
            message=str(value)[:2000],
            row=getattr(value, "row", None),
            at=f"{os.path.basename(user.tb_frame.f_code.co_filename)}:{user.tb_lineno}" if user is not None else "?",
        )
        previous(kind, value, original)

    sys.excepthook = excepthook
