"""What a statement writes, and whether rank 0 may run it alone: the questions the output
planners (side effects, output helpers, per-process paths, logging, downloads) share.

A write the single-GPU script made once moves under ``if ddpify.is_main_process():`` only when
it is a statement of its own, outside any rank test, and runs nothing every rank must run
(a forward through the DDP model, a collective): on rank 0 alone those hang.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import sys

import libcst as cst
from libcst.metadata import QualifiedNameSource

from ddpify.analysis.ranks import RankSelection
from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.convert.rewrites_io import downloaded_by_rank_zero, first_on_rank_zero
from ddpify.convert.writes import CSV_WRITE_METHODS, CSV_WRITERS, OPEN, STAR_IMPORTED_WRITERS, WRITE_METHODS, WRITERS
from ddpify.tree.cstutil import code, of_types

RUNTIME_COLLECTIVES = frozenset({"ddpify.runtime.save", "ddpify.runtime.barrier"})


# ---------------------------------------------------------------- what writes
def write_label(recording: Recording, call: cst.Call) -> str | None:
    """A short name for what ``call`` writes, or None when it writes nothing we guard."""
    for name in recording.qualified(call):
        if name in WRITERS:
            return WRITERS[name]
    if _star_imported_writer(recording, call):
        return code(call.func)
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in WRITE_METHODS:
        return f".{func.attr.value}()"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        receiver, method = func.value.value, func.attr.value
        values = [v for v in recording.values_of(receiver) if isinstance(v, cst.Call)]
        if method in CSV_WRITE_METHODS and any(recording.qualified(v) & CSV_WRITERS for v in values):
            return f"{receiver}.{method}"
        if method == "write" and any(recording.qualified(v) & names.TQDM for v in values + _with_bound(recording, call, receiver)):
            return f"{receiver}.write (a tqdm bar's write)"  # tqdm.write's instance spelling
    if isinstance(func, cst.Name) and "progress" in func.value.lower() and imported_from_local_module(recording, func):
        return f"{func.value} (a progress helper from a local module)"
    return None


def _with_bound(recording: Recording, node: cst.CSTNode, name: str) -> list[cst.Call]:
    """The calls bound to ``name`` by the ``with ... as name:`` blocks around ``node``."""
    return [
        item.item
        for ancestor in recording.ancestors(node)
        if isinstance(ancestor, cst.With)
        for item in ancestor.items
        if item.asname is not None and code(item.asname.name) == name and isinstance(item.item, cst.Call)
    ]


def _star_imported_writer(recording: Recording, call: cst.Call) -> bool:
    """``sys.stdout.write(...)`` with ``sys`` bound nowhere in the file but a star import
    present: the star import is where ``sys`` comes from (see STAR_IMPORTED_WRITERS)."""
    if not recording.star_import or recording.qualified(call) or code(call.func) not in STAR_IMPORTED_WRITERS:
        return False
    head = call.func
    while isinstance(head, cst.Attribute):
        head = head.value
    return not recording.bindings(head, ())


def imported_from_local_module(recording: Recording, name: cst.CSTNode) -> bool:
    """``from utils import progress_bar``, ``import visuals; visuals.plot(...)``: the module is
    the project's own, not an installed one."""
    qualified_names = recording.qualified_names(name)
    for qualified in qualified_names:
        if qualified.source is QualifiedNameSource.IMPORT:
            return qualified.name.startswith(".") or not _installed(qualified.name.split(".")[0])
    if qualified_names or not isinstance(name, cst.Name) or recording.defines(name.value):
        return False
    return any(_local_module(module) for module in _star_imported_modules(recording.module))  # from utils import *


def _star_imported_modules(module: cst.Module) -> list[str]:
    """``from utils import *`` / ``from .helpers import *`` at the top level: the modules."""
    found = []
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else []:
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                dots = "." * len(small.relative)
                found.append(dots + (code(small.module) if small.module is not None else ""))
    return found


def _local_module(module: str) -> bool:
    return module.startswith(".") or not _installed(module.split(".")[0])


@functools.lru_cache(maxsize=64)
def _installed(module: str) -> bool:
    """Whether ``module`` is the standard library's or installed; the working directory is left
    out of the search, so a ``utils.py`` beside the script counts as local wherever ddpify runs."""
    if module in sys.stdlib_module_names or module in names.LIBRARY_MODULES:
        return True
    here = {"", os.getcwd()}
    path = [p for p in sys.path if p not in here]
    return importlib.machinery.PathFinder.find_spec(module, path) is not None


def is_write_open(recording: Recording, call: cst.Call) -> bool:
    """``open(path, "w" | "a" | "x" [+ "b"])``: creates or appends to a file (no reading)."""
    if not recording.qualified(call) & OPEN:
        return False
    mode = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "mode"), None)
    if mode is None and len(call.args) > 1 and call.args[1].keyword is None:
        mode = call.args[1].value
    if not isinstance(mode, cst.SimpleString):
        return False
    text = str(mode.evaluated_value)
    return bool(set(text) & set("wax")) and not set(text) & set("r+")


# ---------------------------------------------------------------- statements
def statement_of(recording: Recording, node: cst.CSTNode) -> cst.CSTNode | None:
    """The simple statement (line or one-line suite) holding ``node``, or None (a loop header,
    a condition, a lambda)."""
    for ancestor in recording.ancestors(node):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return ancestor
        if isinstance(ancestor, (cst.BaseCompoundStatement, cst.Lambda)):
            return None
    return None


def statement_line(recording: Recording, node: cst.CSTNode) -> int:
    """The first line of the statement holding ``node`` (a compound statement's header line):
    where a report item about ``node`` points."""
    for ancestor in (node, *recording.ancestors(node)):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return recording.line(ancestor)
    return recording.line(node)


def is_call_statement(statement: cst.CSTNode | None, call: cst.Call) -> bool:
    """``statement`` is ``call`` alone: its result is used nowhere."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and statement.body[0].value is call
    )


def must_run_everywhere(recording: Recording, facts: Facts, node: cst.CSTNode, *, saves: bool = True) -> str | None:
    """The first forward of a trained model or collective in ``node``, as text, or None;
    ``saves``: a ``torch.save`` counts (``ddpify.save`` waits at a barrier)."""
    models = facts.model_keys
    collectives = (names.TORCH_SAVE | RUNTIME_COLLECTIVES) if saves else RUNTIME_COLLECTIVES - {"ddpify.runtime.save"}
    for call in of_types(node, cst.Call):
        func = code(call.func)
        if func in models or func.removesuffix(".forward") in models:
            return f"{func}(...)"
        qualified = recording.qualified(call)
        if qualified & collectives or any(q.startswith(names.DISTRIBUTED_PREFIXES) for q in qualified):
            return f"{func}(...)"
    return None


def already_guarded(recording: Recording, node: cst.CSTNode) -> bool:
    """Only some ranks run it (``if rank == 0:``, ``if ddpify.is_main_process():``, an early
    exit, or callers behind a rank test): ``ddpify.analysis.context`` decides, as for the linter."""
    return recording.analysis.context.selection(node) is not RankSelection.ALL


def on_rank_zero_only(recording: Recording, facts: Facts, node: cst.CSTNode) -> bool:
    """``node`` runs on rank 0 alone after the conversion: behind a rank test, or inside a
    statement an earlier planner moved under ``if ddpify.is_main_process():``. A collective
    there (a barrier, ``main_process_first``) would hang the other ranks."""
    if already_guarded(recording, node):
        return True
    guarded = facts.main_process_only.keys() | facts.rank_zero_helpers.keys()
    return any(a in guarded for a in (node, *recording.ancestors(node)))


def ordered_first(recording: Recording, facts: Facts, node: cst.CSTNode) -> bool:
    """``node`` runs under ``ddpify.main_process_first()`` after the conversion (a download
    statement, an existence test and its download): rank 0 finishes it before the others start,
    so they read what rank 0 wrote there without a barrier."""
    ordered = (first_on_rank_zero, downloaded_by_rank_zero)
    for ancestor in (node, *recording.ancestors(node)):
        if ancestor in facts.downloads:
            return True
        planned = facts.node_rewrites.get(ancestor)
        if planned is not None and planned.rewrite in ordered:
            return True
    return False


def variables(recording: Recording, node: cst.CSTNode) -> list[str]:
    """The plain names read in ``node``: ``base`` and ``stamp`` in ``os.path.join(base, stamp)``,
    not ``path`` or ``join``, nor a keyword's name."""
    found: list[str] = []
    for name in of_types(node, cst.Name):
        parent = recording.parent(name)
        if not (isinstance(parent, cst.Attribute) and parent.attr is name or isinstance(parent, cst.Arg) and parent.keyword is name):
            found.append(name.value)
    return found


def same_scope_values(recording: Recording, variable: str, function: cst.FunctionDef | None) -> list[cst.BaseExpression]:
    """The values assigned to ``variable`` in ``function`` or at module level: what a name read
    in ``function`` may hold (a value bound in another function is another variable)."""
    return [v for v in recording.values_of(variable) if recording.function_of(v) in (function, None)]


STREAMS = frozenset({"sys.stdout", "sys.stderr"})


def replaces_a_stream(recording: Recording, facts: Facts, call: cst.Call) -> bool:
    """``sys.stdout = Logger(path)`` (a tee into a log file) or ``sys.stdout = open(path, 'w')``:
    a no-op stand-in there would be the other ranks' process-wide stream, which libraries read
    (``sys.stdout.encoding``: sympy's import, loaded by torch, fails on it). The assignment goes
    under ``if ddpify.is_main_process():`` instead; the other ranks keep their real stream (and
    their prints are rank 0's already)."""
    assign = recording.parent(call)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not recording.qualified(assign.targets[0].target) & STREAMS:
        return False
    statement = recording.parent(assign)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    facts.main_process_only[statement] = f"{code(assign.targets[0].target)} = {code(call.func)}(...)"
    return True
