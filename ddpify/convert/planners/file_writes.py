"""Files written through spellings the side-effects planner leaves alone: ``open`` with a
write mode that also reads (``"w+"``, ``"wb+"``, ``"a+"``, ``"x+"``, as the second argument or
``mode=``), ``"r+"`` (changes a file in place), and pathlib's ``Path.write_text`` /
``Path.write_bytes``. Every rank would write the same file at once: a late rank's truncation
can zero the start of what rank 0 is writing (Beta-VAE's ``open(path, "wb+")`` around
``torch.save``).

- a handle (``with open(p, "wb+") as f:``, ``log = open(p, "a+")``) that the code never reads
  back is opened on rank 0 only, ``ddpify.rank_zero(open)(...)``: the code around it still
  runs everywhere, the other ranks write into a no-op file (``Facts.rank_zero_opens``);
- ``path.write_text(...)`` as a statement of its own goes under ``if ddpify.is_main_process():``
  (``Facts.main_process_only``);
- anything else (a handle read back, ``"r+"``, an ``open`` or ``write_text`` inside a larger
  expression) is reported: which rank writes, and when the others may read, is a decision.

Calls behind a rank test and calls another planner already decided on are left alone."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.convert.writes import OPEN
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import callee_name, code, is_simple_reference, of_types

PATH_WRITES = frozenset({"write_text", "write_bytes"})
_READ_METHODS = frozenset({"read", "readline", "readlines", "readinto", "read1"})
_READERS = frozenset({"load", "loads", "safe_load", "full_load", "reader", "DictReader", "fromfile", "loadtxt", "genfromtxt"})


def plan(recording: Recording, facts: Facts) -> None:
    context, output = recording.analysis.context, recording.analysis.output
    reported = {item.line for item in facts.manual}
    for call in recording.write_calls:
        mode = _mode(recording, call)
        if mode is None or "+" not in mode or call in facts.rank_zero_opens or not context.every_rank(call) or output.per_rank_file(call):
            continue
        line = recording.line(recording_statement(recording, call))
        if line in reported:
            continue
        handle, region = _handle(recording, call)
        if not set(mode) & set("wax"):
            facts.manual.append(_in_place_item(line, mode))
        elif handle is None or _reads_back(recording, handle, region):
            facts.manual.append(_read_back_item(line, mode, handle))
        else:
            facts.rank_zero_opens.add(call)
            continue
        if handle is not None:
            _unguard_writes_into(recording, facts, handle, region)
    for name in PATH_WRITES:
        for call in recording.analysis.source.calls_by_callee.get(name, []):
            if isinstance(call.func, cst.Attribute) and context.every_rank(call) and not output.per_rank_file(call):
                _plan_path_write(recording, facts, call, reported)


def _mode(recording: Recording, call: cst.Call) -> str | None:
    """The literal mode of ``open(path, mode)`` / ``open(path, mode=...)``; None otherwise."""
    if not recording.qualified(call) & OPEN:
        return None
    mode = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "mode"), None)
    if mode is None and len(call.args) > 1 and call.args[1].keyword is None:
        mode = call.args[1].value
    return str(mode.evaluated_value) if isinstance(mode, cst.SimpleString) else None


def recording_statement(recording: Recording, node: cst.CSTNode) -> cst.CSTNode:
    """The statement ``node`` is part of (its first line is where a report points)."""
    for ancestor in recording.ancestors(node):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ancestor
    return node


def _handle(recording: Recording, call: cst.Call) -> tuple[str | None, cst.CSTNode]:
    """The name the opened file is kept in (``with ... as f``, ``f = open(...)``) and the code
    that may use it (the with-block, else the enclosing function or module)."""
    parent = recording.parent(call)
    if isinstance(parent, cst.WithItem) and parent.asname is not None and is_simple_reference(parent.asname.name):
        block = recording.parent(parent)
        return code(parent.asname.name), block if block is not None else call
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and is_simple_reference(parent.targets[0].target):
        return code(parent.targets[0].target), recording.function_of(call) or recording.module
    return None, call


def _unguard_writes_into(recording: Recording, facts: Facts, handle: str, region: cst.CSTNode) -> None:
    """A reported handle is the human's: writes into it (``json.dump(x, f)``) stay on every rank.
    The side-effects planner put them on rank 0, which is right for a file only written, but
    here every rank opened (and truncated) the file and reads it back: rank 0 alone writing
    would leave the others reading an empty file."""
    for statement in [s for s in facts.main_process_only if any(a is region for a in recording.ancestors(s))]:
        if any(_uses(call, handle) for call in of_types(statement, cst.Call)):
            del facts.main_process_only[statement]
    facts.kept_writes.update(call for call in of_types(region, cst.Call) if _uses(call, handle))


def _uses(call: cst.Call, handle: str) -> bool:
    """``json.dump(x, f)``, ``print(x, file=f)`` or ``f.write(x)``."""
    func = call.func
    return (isinstance(func, cst.Attribute) and code(func.value) == handle) or any(code(arg.value) == handle for arg in call.args)


def _reads_back(recording: Recording, handle: str, region: cst.CSTNode) -> bool:
    """``f.read()``, ``for line in f``, ``json.load(f)``, ``torch.load(f)`` in ``region``."""
    for node in of_types(region, cst.Call, cst.For):
        if isinstance(node, cst.For):
            if code(node.iter) == handle:
                return True
            continue
        assert isinstance(node, cst.Call)
        func = node.func
        if isinstance(func, cst.Attribute) and code(func.value) == handle and func.attr.value in _READ_METHODS:
            return True
        if (callee_name(node) or "") in _READERS and any(code(a.value) == handle for a in node.args):
            return True
    return False


def _plan_path_write(recording: Recording, facts: Facts, call: cst.Call, reported: set[int]) -> None:
    expression = recording.parent(call)
    statement = recording.parent(expression) if isinstance(expression, cst.Expr) else None
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        facts.main_process_only.setdefault(statement, f"file written by {code(call.func)}()")
        return
    line = recording.line(recording_statement(recording, call))
    if line not in reported:
        facts.manual.append(
            ManualItem(
                line,
                f"{code(call.func)}() writes a file on every rank, inside a statement that also does other work",
                "write it on rank 0 only (compute the text first, then `if ddpify.is_main_process(): path.write_text(text)`); "
                "if the ranks read it back, call ddpify.barrier() after the write",
            )
        )


def _read_back_item(line: int, mode: str, handle: str | None) -> ManualItem:
    kept = f"and the code reads it back through {handle}" if handle is not None else "inside a larger expression"
    return ManualItem(
        line,
        f"open(..., {mode!r}) creates or truncates the file on every rank at once, {kept}: ddpify.rank_zero(open) would "
        "give the other ranks a no-op file with nothing to read",
        "write it on rank 0 only (if ddpify.is_main_process(): with open(...) as f: ...), call ddpify.barrier(), "
        "then let every rank open it for reading ('r')",
    )


def _in_place_item(line: int, mode: str) -> ManualItem:
    return ManualItem(
        line,
        f"open(..., {mode!r}) lets every rank change the same file in place at once",
        "change it on rank 0 only (if ddpify.is_main_process(): ...) and call ddpify.barrier() before other ranks read it",
    )
