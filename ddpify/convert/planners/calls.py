"""Whose code a call runs (this file's, the project's other modules', a library's) and whether
it runs on rank 0 only: shared by the planners for helper loaders, checkpoint helpers, model
wraps and the report of functions handed models and loaders."""

from __future__ import annotations

import re
import sys

import libcst as cst
from libcst.metadata import QualifiedNameSource

from ddpify.analysis.ranks import RankSelection
from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import callee_name, code

# Calls that take the model as an argument without training it.
HARMLESS_CALLS = frozenset(
    {
        "print",
        "len",
        "isinstance",
        "str",
        "repr",
        "type",
        "id",
        "hasattr",
        "getattr",
        "setattr",
        "watch",
        "summary",
        "count_parameters",
        "info",
        "debug",
        "log",
    }
)
# Calls that copy what they are given (an EMA, a best model): copy.deepcopy(model)
COPIES = frozenset({"deepcopy", "copy"})
# Helpers that load weights into the model they are given (load_checkpoint(ckpt, model)): the
# model is wrapped after them, so they load into the plain module (no "module." keys).
LOADS_INTO = re.compile(r"load|restore", re.I)


def opaque_helper(recording: Recording, call: cst.Call) -> str | None:
    """``get_loaders`` for a call of a function this file does not define (imported, or a
    method of an object built elsewhere); None for local code, builtins, DataLoader itself
    and ddpify's own helpers."""
    name = callee_name(call)
    if name is None or name in recording.defined:
        return None
    if any(
        q.source is QualifiedNameSource.BUILTIN or q.name in names.DATALOADER or q.name.startswith(names.RUNTIME_MODULE + ".")
        for q in recording.qualified_names(call)
    ):
        return None
    return code(call.func)


def project_helper(recording: Recording, call: cst.Call) -> str | None:
    """``save_checkpoint`` for a function of the project's own modules (``from utils import
    save_checkpoint``, ``utils.save_checkpoint``, a star import); None for this file's code,
    its variables' methods, the standard library and known libraries (names.LIBRARY_MODULES)."""
    helper = opaque_helper(recording, call)
    for qualified in recording.qualified_names(call):
        top = qualified.name.split(".")[0]
        if qualified.source is QualifiedNameSource.LOCAL or top in sys.stdlib_module_names or top in names.LIBRARY_MODULES:
            return None
    return helper


def behind_rank_test(recording: Recording, node: cst.CSTNode) -> bool:
    """Only some ranks run it: a rank test around it (any spelling, ``ddpify.analysis.rank_tests``),
    an early exit above it, or every caller of its function behind one (``analysis.context``)."""
    return recording.analysis.context.selection(node) is not RankSelection.ALL


def builds_project_object(recording: Recording, call: cst.Call) -> bool:
    """``CheckpointIO(...)``, ``Logger(path)``: a class of the project's modules (read) is built;
    building the object saves or writes nothing yet."""
    return (
        isinstance(call.func, (cst.Name, cst.Attribute))
        and recording.analysis.source.project.named(f"{code(call.func)}.__init__") is not None
    )


def imported_helper(recording: Recording, call: cst.Call) -> str | None:
    """A project helper (see :func:`project_helper`) that is imported, or a plain name a star
    import may have brought; not a method of an object this file cannot name, not a harmless
    call (``summary(model)``) and not a loading helper."""
    helper = project_helper(recording, call)
    qualified = recording.qualified_names(call)
    if helper is None or callee_name(call) in HARMLESS_CALLS or LOADS_INTO.search(helper):
        return None
    if any(q.source is QualifiedNameSource.IMPORT for q in qualified):
        return helper
    return helper if not qualified and recording.star_import and isinstance(call.func, cst.Name) else None


def runs_companion_code(recording: Recording, facts: Facts, call: cst.Call) -> bool:
    """``call`` runs code of a module converted alongside this file (``Facts.companion_files``):
    that code saves and writes on rank 0 itself once converted, and waits for the other ranks
    there (``ddpify.save``), so the call must stay on every rank."""
    if not facts.companion_files:
        return False
    found = recording.analysis.source.project_file(call)
    return found is not None and str(found.resolve()) in facts.companion_files
