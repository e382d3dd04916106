"""``set_epoch`` only where it belongs: at the top of a loop that counts epochs
(``ddpify.analysis.loops``: not the loop that makes one epoch's batches), for a loader that
exists when the loop runs.

Runs after ``epochs.plan`` and takes back what it placed wrongly:

- a loop the analysis does not count as an epoch loop (a batch generator's
  ``for idx in range(n // batchsize): yield ...``): every pass of it would restart the sampler;
- a loader the loop does not use that is bound only under a condition the loop is not under
  (``if not os.path.exists(cache): loader = DataLoader(...)``): ``set_epoch`` would raise
  NameError on the runs that take the other branch.

Nothing is lost either way: a loader whose epoch is never set advances its sampler's epoch on
every pass by itself (``ddpify.distributed_loader``)."""

from __future__ import annotations

import re

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.findings import Change
from ddpify.tree.cstutil import code

_CONDITIONAL = (cst.If, cst.While, cst.For, cst.ExceptHandler, cst.IfExp)


def plan(recording: Recording, facts: Facts) -> None:
    if not facts.set_epoch:
        return
    shared = recording.analysis
    for loop in list(facts.set_epoch):
        line = recording.line(loop)
        if not shared.loops.is_epoch_loop(loop):
            for key in facts.set_epoch.pop(loop):
                facts.changes.append(
                    Change(line, f"no ddpify.set_epoch({key}, ...) in this loop: it makes one epoch's batches, it does not count epochs")
                )
            continue
        kept: list[str] = []
        for key in facts.set_epoch[loop]:
            condition = None if _used(shared, loop, key) else _only_bound_under(recording, loop, key)
            if condition is None:
                kept.append(key)
                continue
            facts.changes.append(
                Change(
                    line,
                    f"no ddpify.set_epoch({key}, ...) in this loop: {key} is bound only under `{_describe(*condition)}` "
                    f"(line {recording.line(condition[0])}) and the loop does not use it; its sampler advances its epoch on every pass",
                )
            )
        if kept:
            facts.set_epoch[loop] = kept
        else:
            del facts.set_epoch[loop]


def _used(shared: object, loop: cst.For, key: str) -> bool:
    """The loop iterates ``key``, hands it to other code or names it at all."""
    loops = shared.loops  # type: ignore[attr-defined]
    if key in loops.iterated(loop) or key in loops.handed_out(loop):
        return True
    return re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", code(loop.body)) is not None


def _only_bound_under(recording: Recording, loop: cst.For, key: str) -> tuple[cst.CSTNode, bool] | None:
    """A condition (``if``, loop, ``except``; and whether in its ``else``) every binding of ``key`` sits under and ``loop`` does not (the
    loader may then be undefined where the loop runs); None when one binding is unconditional
    or the loop shares the condition. Plain names only: ``self.loader`` is set in methods."""
    if "." in key:
        return None
    around_loop = set(map(id, recording.ancestors(loop)))
    conditions: list[tuple[cst.CSTNode, bool]] = []
    for statement, _ in recording.analysis.source.assignments.get(key, []):
        found: tuple[cst.CSTNode, bool] | None = None
        child: cst.CSTNode = statement
        for ancestor in recording.ancestors(statement):
            if id(ancestor) in around_loop or isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(ancestor, _CONDITIONAL):
                found = (ancestor, isinstance(ancestor, cst.If) and child is ancestor.orelse)
            child = ancestor
        if found is None:
            return None
        conditions.append(found)
    return conditions[0] if conditions else None


def _describe(node: cst.CSTNode, orelse: bool) -> str:
    """``if not os.path.exists(cache)``, ``else of if x``, ``for x in items``, ``except OSError``."""
    if isinstance(node, (cst.If, cst.While)):
        text = f"{'else of ' if orelse else ''}{'while' if isinstance(node, cst.While) else 'if'} {code(node.test)}"
    elif isinstance(node, cst.IfExp):
        text = f"... if {code(node.test)} else ..."
    elif isinstance(node, cst.For):
        text = f"for {code(node.target)} in {code(node.iter)}"
    else:
        assert isinstance(node, cst.ExceptHandler)
        text = "except" + (f" {code(node.type)}" if node.type is not None else "")
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
