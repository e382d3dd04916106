"""Counters of training samples that steer the training: ``global_step += x.size(0)`` handed
to a warm-up schedule (``scheduler.step(global_step)``), a learning rate computed from
``seen`` (``group["lr"] = base * min(1, seen / warmup)``), ``while samples < total:``. Under
DDP each rank adds only its own shard's batch, so the warm-up would last world_size times as
many steps as in the original and training would run that much longer. The increment is scaled
by the number of ranks (``x.size(0) * ddpify.world_size()``; a DistributedSampler gives every
rank batches of one size; one process: as before).

A counter that only divides (``total / n``, the rank's own mean) or is only printed is left
alone: there the rank's own count is the right one, or nothing depends on it.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert import rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import attribute_name, code, of_types


def plan(recording: Recording, facts: Facts) -> None:
    if not (facts.wraps_models() or recording.existing_wraps):
        return  # nothing sharded into a DDP model: every count is the whole run's
    source = recording.analysis.source
    divergence = recording.analysis.context.divergence
    for step in source.of_types(cst.AugAssign):
        assert isinstance(step, cst.AugAssign)
        if not isinstance(step.operator, cst.AddAssign) or not isinstance(step.target, cst.Name):
            continue
        batch = _batch_length(step.value)
        why = divergence.why(batch) if batch is not None else None
        if why is None or why.kind != "data":
            continue  # not the length of a training batch (a sharded loader's)
        counter = step.target.value
        if not _steers(recording, counter):
            continue
        facts.node_rewrites[step.value] = NodeRewrite(
            rewrites_io.times_world_size,
            f"{counter} counts training samples and steers the training (its schedule or its end): each rank sees its own "
            f"shard, so the count is scaled by the number of ranks ({code(step.value)} * ddpify.world_size())",
        )


def _batch_length(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The batch of ``x.size(0)``, ``x.size()[0]``, ``x.shape[0]``, ``len(x)``."""
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Name) and value.func.value == "len" and len(value.args) == 1:
            return value.args[0].value
        if attribute_name(value.func) == "size" and len(value.args) == 1 and code(value.args[0].value) == "0":
            return value.func.value  # type: ignore[attr-defined]
    if isinstance(value, cst.Subscript) and code(value.slice[0]) == "0":
        inner = value.value
        if isinstance(inner, cst.Attribute) and inner.attr.value == "shape":
            return inner.value
        if isinstance(inner, cst.Call) and attribute_name(inner.func) == "size" and not inner.args:
            return inner.func.value  # type: ignore[attr-defined]
    return None


def _steers(recording: Recording, counter: str) -> bool:
    """``counter`` reaches a scheduler's ``step``, a learning rate, or a loop's test (itself,
    or through a variable computed from it); never as a divisor (a mean of the rank's own)."""
    module = recording.module
    reads = [n for n in of_types(module, cst.Name) if n.value == counter]
    derived = {counter}
    for assign in of_types(module, cst.Assign):
        if any(n.value == counter for n in of_types(assign.value, cst.Name)):
            derived.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
    for name in reads:
        for ancestor in recording.ancestors(name):
            if isinstance(ancestor, cst.BinaryOperation) and isinstance(ancestor.operator, (cst.Divide, cst.FloorDivide)):
                if any(n is name for n in of_types(ancestor.right, cst.Name)):
                    return False
            if isinstance(ancestor, cst.BaseStatement):
                break
    for node in of_types(module, cst.Name):
        if node.value not in derived:
            continue
        for ancestor in recording.ancestors(node):
            if isinstance(ancestor, cst.Call) and attribute_name(ancestor.func) == "step" and "sched" in code(ancestor.func).lower():
                return True
            if isinstance(ancestor, cst.While) and any(n is node for n in of_types(ancestor.test, cst.Name)):
                return True
            if isinstance(ancestor, cst.Assign) and any(_learning_rate(t.target) for t in ancestor.targets):
                return True
            if isinstance(ancestor, cst.BaseStatement) and not isinstance(ancestor, cst.While):
                break
    return False


def _learning_rate(target: cst.BaseExpression) -> bool:
    """``group["lr"]`` / ``optimizer.param_groups[0]["lr"]``."""
    return isinstance(target, cst.Subscript) and code(target.slice[0]).strip("\"'[]") in ("lr", "learning_rate")
