"""Directories created on every rank: all ranks run ``if not d.exists(): d.mkdir()`` at once, and
all but the first crash with FileExistsError. ``os.mkdir`` / ``os.makedirs`` become
``os.makedirs(d, exist_ok=True)`` in the transformer (``names.MAKE_DIRECTORY``); this planner
covers the spellings that rewrite cannot reach:

- pathlib's ``path.mkdir(...)`` without ``exist_ok`` gets ``exist_ok=True`` when the receiver is
  a ``pathlib.Path`` by evidence: ``Path(...)`` itself, ``/``, ``.parent`` or a path method of one,
  or a variable (of the same function or the module) only ever assigned such values; another
  object's ``mkdir`` method (an FTP client) is left alone;
- ``mkdir(d)`` imported from ``os`` (``from os import mkdir``, no ``makedirs`` in scope to switch
  to) is reported with what to write.

Calls behind a rank test (only some ranks create it) are left alone.

A refusal to overwrite (``if os.path.exists(out): raise KeyError("Existing path")`` before
``os.makedirs(out)``, StyleGAN.pytorch's train.py) races on every rank: the first rank to create
the folder makes the others refuse. ``ddpify.barrier()`` after the test lets every rank test
before any creates it, so all agree, as one process would.

A set-up decision on a path that exists (``if os.path.exists(log): (rmtree and recreate it, or
exit) else: makedirs(log)``, ddim's main.py; ``if isdir(ckpt) and args.fresh: rmtree(ckpt)``
before ``makedirs(ckpt)``) races the same way: a rank that tests after another created the
folder takes the other branch (and exits, leaving the rest hanging), and rank 0's removal may
come after another rank created it. The test becomes ``ddpify.agreed(test)``, rank 0's answer
on every rank (a barrier before it would not do: the ranks leave a barrier at different
moments), and ``ddpify.barrier()`` after the ``if`` lets rank 0 finish removing and creating
before anyone goes on; a removal followed in its branch by the path's creation on every rank
gets a barrier right after it (else another rank's ``makedirs`` meets the folder half removed). A plain ``if not exists(d): makedirs(d)`` needs neither:
``exist_ok=True`` is enough."""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.convert import names, rewrites
from ddpify.convert.fact_types import Facts, Insertion, NodeRewrite
from ddpify.convert.planners.rank_zero import already_guarded, on_rank_zero_only, same_scope_values
from ddpify.convert.planners.read_back import removed_path
from ddpify.convert.record import Recording
from ddpify.convert.rewrites import RT
from ddpify.findings import ManualItem
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code

PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath"})
# Path members that give back another Path.
_PATH_RESULTS = frozenset({"parent", "joinpath", "with_name", "with_suffix", "with_stem", "resolve", "absolute", "expanduser"})


# calls that end the process
_EXITS = frozenset({"sys.exit", "builtins.exit", "builtins.quit", "os._exit"})


def plan_refusals(recording: Recording, facts: Facts) -> None:
    """``ddpify.barrier()`` after an ``if`` that leaves when a path exists and is followed, in
    the same block, by a statement that creates a directory (see the module docstring)."""
    source = recording.analysis.source
    for test in source.of_types(cst.If):
        assert isinstance(test, cst.If)
        block = recording.parent(test)
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        if test.orelse is not None or not tests_existence(recording, test.test) or not _leaves(recording, test.body):
            continue
        after = body[body.index(test) + 1 :]
        if on_rank_zero_only(recording, facts, test) or not any(_creates_directory(recording, s) for s in after):
            continue
        if after and is_barrier(recording, after[0]):
            continue  # converted before
        statement = snippets.statement("barrier", rt=RT)
        what = (
            f"every rank tests `{code(test.test)}` before any rank creates it: ddpify.barrier() after the test "
            "(else the first rank to create it makes the others refuse)"
        )
        facts.inserted.append(Insertion(f"barrier:{recording.line(test)}", test, statement, what))


def plan_set_up_tests(recording: Recording, facts: Facts) -> None:
    """``if ddpify.agreed(test):`` and ``ddpify.barrier()`` after it, for an ``if`` on a path's
    existence whose branches remove a path or stop the run, and that creates a directory in a
    branch or right after (see the module docstring). Only where every rank runs it alike."""
    context = recording.analysis.context
    planned = {insertion.key for insertion in facts.inserted}
    for test in recording.analysis.source.of_types(cst.If):
        assert isinstance(test, cst.If)
        block = recording.parent(test)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)) or not tests_existence(recording, test.test):
            continue  # an `elif` belongs to the `if` before it
        body = list(block.body)
        after = body[body.index(test) + 1 :]
        calls = cstutil.of_types(test, cst.Call)
        removes = any(removed_path(recording, c) is not None for c in calls)
        branches = [b.body for b in cstutil.of_types(test, cst.If, cst.Else) if isinstance(b, (cst.If, cst.Else))]
        stops = test.orelse is not None and any(_leaves(recording, b) for b in branches)
        creates = _creates_directory(recording, test) or (after and _creates_directory(recording, after[0]))
        if not creates or not (removes or stops) or on_rank_zero_only(recording, facts, test):
            continue
        if not context.every_rank(test) or context.divergent_condition(test) is not None:
            continue
        shown = f"`if {code(test.test)}:`"
        if not asks_rank_zero(recording, test.test):
            what = f"{shown} asks rank 0: ddpify.agreed(...) gives every rank its answer (else a rank that tests after another created the path takes another branch)"
            facts.node_rewrites[test.test] = NodeRewrite(rewrites.agreed, what)
        key = f"barrier:{recording.line(test)}"
        if key not in planned and not (after and is_barrier(recording, after[0])):
            what = f"ddpify.barrier() after {shown}: rank 0 finishes removing and creating before any rank goes on"
            facts.inserted.append(Insertion(key, test, snippets.statement("barrier", rt=RT), what))
            planned.add(key)
        _barriers_after_removals(recording, facts, test, planned)


def _barriers_after_removals(recording: Recording, facts: Facts, test: cst.If, planned: set[str]) -> None:
    """``shutil.rmtree(d)`` (rank 0's) followed in its branch by ``os.makedirs(d, exist_ok=True)``
    on every rank: without a barrier between them another rank's ``makedirs`` meets the folder
    half removed (FileExistsError) or made before the removal (then gone)."""
    for block in cstutil.of_types(test, cst.IndentedBlock):
        body = list(block.body)
        for statement, following in zip(body, body[1:], strict=False):
            if not any(removed_path(recording, c) is not None for c in cstutil.of_types(statement, cst.Call)):
                continue
            key = f"barrier:{recording.line(statement)}"
            if key in planned or is_barrier(recording, following):
                continue
            what = "ddpify.barrier() after the removal: rank 0 finishes removing before any rank creates it again"
            facts.inserted.append(Insertion(key, statement, snippets.statement("barrier", rt=RT), what))
            planned.add(key)


def asks_rank_zero(recording: Recording, test: cst.BaseExpression) -> bool:
    """``ddpify.agreed(...)`` already (converted before)."""
    return isinstance(test, cst.Call) and f"{names.RUNTIME_MODULE}.agreed" in recording.qualified(test.func)


def is_barrier(recording: Recording, statement: cst.CSTNode) -> bool:
    calls = cstutil.of_types(statement, cst.Call) if isinstance(statement, cst.SimpleStatementLine) else []
    return any(f"{names.RUNTIME_MODULE}.barrier" in recording.qualified(c.func) for c in calls)


def tests_existence(recording: Recording, expression: cst.BaseExpression) -> bool:
    """``expression`` asks whether a path exists: ``os.path.exists(p)``, ``isfile``, ``Path.exists()``..."""
    return any(
        recording.qualified(c.func) & names.EXISTS_TESTS or cstutil.attribute_name(c.func) in names.EXISTS_METHODS
        for c in cstutil.of_types(expression, cst.Call)
    )


def _leaves(recording: Recording, block: cst.BaseSuite) -> bool:
    """The block ends by raising, returning or ending the process."""
    last = block.body[-1] if isinstance(block, cst.IndentedBlock) and block.body else None
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
    if isinstance(small, (cst.Raise, cst.Return)):
        return True
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and bool(recording.qualified(small.value.func) & _EXITS)


def _creates_directory(recording: Recording, statement: cst.CSTNode) -> bool:
    calls = cstutil.of_types(statement, cst.Call)
    return any(recording.qualified(c.func) & names.MAKE_DIRECTORY or cstutil.is_method_call(c, "mkdir") for c in calls)


def plan(recording: Recording, facts: Facts) -> None:
    """``exist_ok=True`` for pathlib's ``mkdir``; a report for ``from os import mkdir``."""
    for call in recording.write_calls:
        func = call.func
        if already_guarded(recording, call) or rewrites.has_keyword(call, "exist_ok"):
            continue
        if isinstance(func, cst.Attribute) and func.attr.value == "mkdir" and _is_path(recording, func.value, set()):
            if len(call.args) < 3 and not any(a.star for a in call.args):
                facts.node_rewrites[call] = NodeRewrite(
                    _exist_ok, f"{code(func)}() tolerates the other ranks: exist_ok=True (all but the first would raise FileExistsError)"
                )
        elif isinstance(func, cst.Name) and "os.mkdir" in recording.qualified(call):
            facts.manual.append(
                ManualItem(
                    recording.line(call),
                    f"{code(call)} runs on every rank: all but the first raise FileExistsError, and `from os import mkdir` leaves "
                    "no os.makedirs in scope to switch to",
                    f"write os.makedirs({code(call.args[0].value) if call.args else 'path'}, exist_ok=True) (with import os)",
                )
            )


def _exist_ok(call: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(call, cst.Call)
    return rewrites.with_keyword(call, "exist_ok", cst.Name("True"))


def _is_path(recording: Recording, node: cst.BaseExpression, seen: set[str]) -> bool:
    """``node`` evaluates to a ``pathlib.Path`` (see the module docstring)."""
    if isinstance(node, cst.Call):
        if recording.qualified(node.func) & PATH_CLASSES:
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in _PATH_RESULTS and _is_path(recording, node.func.value, seen)
    if isinstance(node, cst.Attribute):
        return node.attr.value == "parent" and _is_path(recording, node.value, seen)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return _is_path(recording, node.left, seen)
    if isinstance(node, cst.Name) and node.value not in seen:
        seen.add(node.value)
        values = same_scope_values(recording, node.value, recording.function_of(node))
        return bool(values) and all(_is_path(recording, v, seen) for v in values)
    return False
