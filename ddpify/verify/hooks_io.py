"""Recorder hooks on side effects: ``torch.save`` (with ``module.`` keys and DDP objects found
in what is saved), files opened for writing, ``print`` and logging lines, and every
``torch.distributed`` collective and barrier (entered and left), so a hung run can say where
each rank was. Barriers the runtime inserts are named by the runtime (:func:`runtime_barrier`).
"""

from __future__ import annotations

import builtins
import functools
import io
import logging
import os
import re
import sys
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from ddpify.verify.recording import Recorder, called_from_torch, is_user_file, user_frame, where

__all__ = ["install", "runtime_barrier"]

COLLECTIVES = (
    "barrier",
    "monitored_barrier",
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "gather",
    "gather_object",
    "scatter",
    "scatter_object_list",
    "broadcast_object_list",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all",
    "all_to_all_single",
)
LINES_KEPT = 3  # lines of text kept per print/log site
_RUNTIME_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{32}\.tmp$")  # ddpify.save's atomic write
_RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime")
_state: dict[str, Any] = {"collectives": 0, "barrier": None}


def _saved_path(target: Any) -> str | None:
    """Absolute path a save writes to (ddpify.save's temporary name mapped to the final one);
    None for in-memory buffers."""
    name = target if isinstance(target, (str, bytes, os.PathLike)) else getattr(target, "name", None)
    if not isinstance(name, (str, bytes, os.PathLike)):
        return None
    path = os.path.abspath(os.fsdecode(name))
    folder, base = os.path.split(path)
    matched = _RUNTIME_TEMPORARY.match(base)
    return os.path.join(folder, matched.group("name")) if matched else path


def _inspect_saved(obj: Any, path: str = "obj", depth: int = 0, found: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """``module.`` keys and DDP objects anywhere in a saved object (dicts, lists, 4 levels)."""
    found = found if found is not None else {"module_keys": [], "ddp_objects": []}
    if isinstance(obj, DistributedDataParallel):
        found["ddp_objects"].append(path)
        return found
    if depth > 4:
        return found
    if isinstance(obj, dict):
        for key, value in list(obj.items())[:10_000]:
            if isinstance(key, str) and key.startswith("module.") and len(found["module_keys"]) < 3:
                found["module_keys"].append(key)
            if isinstance(value, (dict, list, tuple, DistributedDataParallel)):
                _inspect_saved(value, f"{path}[{key!r}]", depth + 1, found)
    elif isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj[:100]):
            _inspect_saved(value, f"{path}[{index}]", depth + 1, found)
    return found


def install(rec: Recorder) -> None:
    """Patch torch.save, open, print, logging and the collectives."""
    original_save = torch.save

    @functools.wraps(original_save)
    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        result = original_save(obj, f, *args, **kwargs)
        path = _saved_path(f)
        if path is not None:
            rec.emit("save", path=path, site=where(user_frame(1)), **_inspect_saved(obj))
        return result

    torch.save = save
    torch.serialization.save = save
    _install_writes(rec)
    _install_lines(rec)
    _install_collectives(rec)


def _install_writes(rec: Recorder) -> None:
    """Files opened for writing, once per file, with the user line that opened them; torch's
    and the runtime's own writes (the checkpoints) are left to the save records."""
    original_open = builtins.open
    written: set[str] = set()

    def note_write(file: Any, mode: str) -> None:
        if not isinstance(file, (str, bytes, os.PathLike)):
            return
        caller = os.path.dirname(sys._getframe(2).f_code.co_filename)
        if called_from_torch(2) or caller == _RUNTIME_DIR:
            return
        path = os.path.abspath(os.fsdecode(file))
        if _RUNTIME_TEMPORARY.match(os.path.basename(path)):  # ddpify.save's, embedded by --standalone
            return
        if path in written or path.startswith((rec.folder, "/dev/", "/proc/")):
            return
        written.add(path)
        rec.emit("write", path=path, mode=mode, site=where(user_frame(2)))

    @functools.wraps(original_open)
    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = original_open(file, mode, *args, **kwargs)
        if isinstance(mode, str) and any(flag in mode for flag in "wax+") and rec.here():
            try:
                note_write(file, mode)
            except Exception as exc:
                rec.emit("recorder-error", where="open", message=repr(exc))
        return handle

    builtins.open = open_
    io.open = open_  # pathlib's write_text and friends


def _install_lines(rec: Recorder) -> None:
    """``print`` to the terminal and logging records that reach a handler, per call site."""
    counts: dict[str, int] = {}
    original_print = builtins.print

    def note_line(kind: str, site: str, text: Any) -> None:
        count = counts[site] = counts.get(site, 0) + 1
        if count <= LINES_KEPT:
            rec.emit(kind, site=site, n=count, text=text()[:200])

    @functools.wraps(original_print)
    def print_(*args: Any, **kwargs: Any) -> None:
        original_print(*args, **kwargs)
        stream = kwargs.get("file")
        if stream is not None and stream not in (sys.stdout, sys.stderr):
            return
        frame: Any = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(os.path.dirname(_RUNTIME_DIR)):
            frame = frame.f_back  # ddpify.print: the line that called it
        if frame is None or not is_user_file(frame.f_code.co_filename) or not rec.here():
            return
        note_line("print", where(frame), lambda: kwargs.get("sep", " ").join(map(str, args)))

    builtins.print = print_
    original_call_handlers = logging.Logger.callHandlers

    @functools.wraps(original_call_handlers)
    def call_handlers(self: logging.Logger, record: logging.LogRecord) -> None:
        original_call_handlers(self, record)
        if is_user_file(record.pathname or "<") and _reaches_handler(self, record) and rec.here():
            note_line("log", f"{os.path.basename(record.pathname)}:{record.lineno}", record.getMessage)

    logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign]
    rec.at_exit.append(lambda: rec.emit("line-counts", counts=counts))


def _reaches_handler(logger: logging.Logger, record: logging.LogRecord) -> bool:
    """Whether the record is written somewhere: a handler on the way up that writes (not a
    ``NullHandler``, what ``ddpify.rank_zero_logging`` gives the other ranks), or logging's last
    resort when the way up has no handler at all."""
    handlers: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        handlers += current.handlers
        if not current.propagate:
            break
        current = current.parent
    if handlers:
        return any(not isinstance(h, logging.NullHandler) and record.levelno >= h.level for h in handlers)
    return logging.lastResort is not None and record.levelno >= logging.lastResort.level


def _install_collectives(rec: Recorder) -> None:
    """Every collective the script (not torch itself) calls: entered, then left."""

    def wrap(name: str, original: Any) -> Any:
        @functools.wraps(original)
        def collective(*args: Any, **kwargs: Any) -> Any:
            if _state["barrier"] is not None or called_from_torch(1) or not rec.here():
                return original(*args, **kwargs)
            number = _state["collectives"]
            _state["collectives"] += 1
            rec.emit("coll", op=f"dist.{name}", site=where(user_frame(1)), n=number, ph="in")
            result = original(*args, **kwargs)
            rec.emit("coll", n=number, ph="out")
            return result

        return collective

    for name in COLLECTIVES:
        if hasattr(dist, name):
            setattr(dist, name, wrap(name, getattr(dist, name)))


def runtime_barrier(rec: Recorder, data: dict[str, Any]) -> None:
    """A barrier the runtime inserts (``ddpify.save at train.py:212``), entered or left; the
    collectives inside it are its own and not recorded again."""
    if data.get("phase") == "enter":
        number = _state["collectives"]
        _state["collectives"] += 1
        _state["barrier"] = number
        rec.emit("coll", op=data.get("what"), site=data.get("site"), n=number, ph="in")
    elif _state["barrier"] is not None:
        rec.emit("coll", n=_state["barrier"], ph="out")
        _state["barrier"] = None
