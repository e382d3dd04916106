"""Metrics a loop accumulates, and the running loss or accuracy a training function returns.

Each rank trains on its own shard, so what a training loop adds up (``epoch_loss +=
loss.item()``, ``losses.update(...)``) is that shard's; a training function of a project module
that returns it unreduced (``loss, acc = trainer.train_network(loader)``) hands the caller one
rank's value. The vocabulary (which names and meters are metrics) is shared by the linter's
metric rules; the returned slots are a project fact (``Helper.returns_metrics``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.collectives import reduces
from ddpify.tree.cstutil import callee_name, code, of_types

if TYPE_CHECKING:
    from ddpify.analysis.source import Source

# Accumulators: `correct += ...`, `total += ...`, `val_loss += ...`.
METRIC = re.compile(r"correct|total|loss|acc|hit|count|err|samples|metric|score|psnr|ssim|iou|dice|f1|auc|^n_|^num_|_sum$|^sum_", re.I)
# Meters: `losses.update(loss.item(), n)`, `top1.update(acc1)`.
METER = re.compile(r"meter|loss|acc|top\d|metric|score|err", re.I)
# Classes whose instances average values over updates: AverageMeter, AvgMeter, SmoothedValue.
METER_CLASS = re.compile(r"meter|smoothed|running_?average|averager", re.I)
# What a training loop accumulates that measures the model (not a sample count).
_MEASURE = re.compile(r"loss|acc|correct|top\d|metric|score|err|meter|hit|psnr|ssim|iou|dice|f1|prec|recall|auc", re.I)
# Meters that time or count, not measure the model: `batch_time.update(...)`.
_NOT_A_MEASURE = re.compile(r"time|speed|throughput|memory|mem$|^lr$|learning_rate|^data(_meter)?$", re.I)
_STEPS = frozenset({"backward", "step"})


def is_meter(source: Source, receiver: cst.BaseExpression) -> bool:
    """A meter by its name, or made by a meter class (IFRNet's ``avg_rec = AverageMeter()``)."""
    if METER.search(code(receiver)):
        return True
    bindings = source.assignments.get(code(receiver), [])
    return any(isinstance(value, cst.Call) and METER_CLASS.search(callee_name(value) or "") for _, value in bindings)


def accumulators(source: Source, loop: cst.For) -> dict[str, cst.CSTNode]:
    """What the loop's body accumulates, by reference text: the targets of ``+=`` with a
    metric-like name, and the meters it ``update``s."""
    found: dict[str, cst.CSTNode] = {}
    for call in of_types(loop.body, cst.Call):
        assert isinstance(call, cst.Call)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "update" and is_meter(source, call.func.value):
            found.setdefault(code(call.func.value), call)
    for augmented in of_types(loop.body, cst.AugAssign):
        assert isinstance(augmented, cst.AugAssign)
        if not isinstance(augmented.operator, cst.AddAssign):
            continue
        target: cst.BaseExpression = augmented.target
        while isinstance(target, cst.Subscript):
            target = target.value
        text = target.attr.value if isinstance(target, cst.Attribute) else code(target)
        if METRIC.search(text):
            found.setdefault(code(target), augmented)
    return found


def running_measures(source: Source, loop: cst.For) -> set[str]:
    """The loop's own running losses, accuracies and scores: accumulated in its body (not in a
    loop nested in it), not counters (``steps += 1``) nor timers, nor values its body computes
    anew each step (``loss = criterion(...)`` before ``loss += aux_loss``)."""
    recomputed = {
        code(n)
        for assign in of_types(loop.body, cst.Assign)
        if isinstance(assign, cst.Assign) and not isinstance(assign.value, (cst.Integer, cst.Float))
        for target in assign.targets
        for n in references(target.target)
    }
    found = set()
    for name, node in accumulators(source, loop).items():
        inner = next((a for a in source.ancestors(node) if isinstance(a, cst.For)), None)
        if inner is loop and name not in recomputed and _measures(name, node):
            found.add(name)
    return found


def _measures(name: str, node: cst.CSTNode) -> bool:
    last = name.rsplit(".", 1)[-1]
    if isinstance(node, cst.AugAssign):
        return bool(_MEASURE.search(last)) and not isinstance(node.value, (cst.Integer, cst.Float))
    return not _NOT_A_MEASURE.search(last)


def references(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The names and attribute or subscript references a target binds (``a, b``, ``rs['train']``)."""
    if isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from references(element.value)
    elif isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
        yield node


def reads(node: cst.CSTNode) -> set[str]:
    """The references ``node`` reads, as text: names, attributes (``meter.avg``), subscripts."""
    return {code(n) for n in of_types(node, cst.Name, cst.Attribute, cst.Subscript)}


def derivations(assignments: list[cst.Assign]) -> dict[str, set[str]]:
    """For each reference the assignments read, the targets they compute from it."""
    derives: dict[str, set[str]] = {}
    for assign in assignments:
        targets = {code(n) for target in assign.targets for n in references(target.target)}
        for text in reads(assign.value):
            derives.setdefault(text, set()).update(targets)
    return derives


def closure(derives: dict[str, set[str]], names: set[str]) -> set[str]:
    """``names`` and everything computed from them, transitively."""
    tracked, todo = set(names), list(names)
    while todo:
        for target in derives.get(todo.pop(), ()):
            if target not in tracked:
                tracked.add(target)
                todo.append(target)
    return tracked


def result_slots(returned: list[cst.BaseExpression], tracked: set[str]) -> tuple[int, ...]:
    """Which elements of the returned tuple read ``tracked`` (``return epoch_loss, last_lr``:
    ``(0,)``); ``(-1,)``: the whole result does, or it is no tuple; ``()``: none."""
    slots: set[int] = set()
    for value in returned:
        if isinstance(value, cst.Tuple):
            slots.update(i for i, element in enumerate(value.elements) if reads(element.value) & tracked)
        elif reads(value) & tracked:
            return (-1,)
    return tuple(sorted(slots))


def returned_metrics(source: Source, functions: list[cst.FunctionDef]) -> dict[cst.FunctionDef, tuple[int, ...]]:
    """The functions whose own loop trains (backward or a step in its body) and accumulates a
    running measure that their result carries, unreduced (no collective in the function): the
    slots of the result that carry it."""
    found: dict[cst.FunctionDef, tuple[int, ...]] = {}
    for function in functions:
        loops = [loop for loop in source.of_types_in(function, cst.For) if source.enclosing_function(loop) is function]
        names = {name for loop in loops if _steps(loop) for name in running_measures(source, loop)}
        if not names or any(reduces(source, call) for call in source.of_types_in(function, cst.Call)):
            continue
        assignments = [a for a in source.of_types_in(function, cst.Assign) if isinstance(a, cst.Assign)]
        returns = [r.value for r in source.of_types_in(function, cst.Return) if isinstance(r, cst.Return) and r.value is not None]
        slots = result_slots(returns, closure(derivations(assignments), names))
        if slots:
            found[function] = slots
    return found


def _steps(loop: cst.For) -> bool:
    return any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value in _STEPS for c in of_types(loop.body, cst.Call) if isinstance(c, cst.Call)
    )
