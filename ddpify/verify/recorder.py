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
import os
import sys
from typing import Any

from ddpify.verify.recording import DIR_ENV_VAR, Recorder, is_user_file

__all__ = ["install", "note", "recorder"]

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
    from ddpify.verify import hooks_batch, hooks_data, hooks_draws, hooks_io, hooks_model

    for hooks in (hooks_data, hooks_draws, hooks_batch, hooks_model, hooks_io):
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
