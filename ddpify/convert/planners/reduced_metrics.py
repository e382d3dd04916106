"""Decisions taken from a metric of each rank's own shard: an epoch's mean training loss tested
for the best checkpoint and for early stopping (``if epoch_loss < best: save ... else: bad +=
1; if bad >= patience: break``). Each rank would decide on its own numbers: a save that waits
for the others, or a ``break`` some ranks take, hangs them, and a plateau scheduler steps the
learning rates apart. The average is taken over the ranks where it is computed,
``epoch_loss = ddpify.mean_over_ranks(total / len(loader))``: every decision read from it is then
one decision for all ranks, and, the shards being equal, the one a single process takes on the
whole data.

Only an average is averaged (a division, a meter's ``.avg``, a ``mean()``): a per-rank sum or
count would need a sum, and stays reported. The assignment must run on every rank, the same
number of times (outside the loop over the sharded batches, under no decision the ranks take
apart): ``mean_over_ranks`` is a collective."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.sources import Role
from ddpify.convert import rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import attribute_name, code, of_types

_MEANS = frozenset({"mean", "nanmean", "fmean", "average"})


def plan(recording: Recording, facts: Facts) -> None:
    if not (facts.wraps_models() or recording.existing_wraps):
        return  # no DDP model: the ranks need not agree
    source = recording.analysis.source
    divergence = recording.analysis.context.divergence
    planned: dict[cst.CSTNode, NodeRewrite] = {}
    for test in [*(n.test for n in source.of_types(cst.If)), *(n.test for n in source.of_types(cst.While))]:
        why = divergence.why(test)
        if why is None or why.kind != "data":
            continue
        for value, target in averages_read(recording, test):
            if value in facts.node_rewrites or value in planned:
                continue
            planned[value] = NodeRewrite(
                rewrites_io.mean_over_ranks,
                f"{target} = ddpify.mean_over_ranks(...): its average over the ranks, so `{' '.join(code(test).split())[:60]}` "
                f"(line {recording.line(test)}) is one decision for all ranks, the one a single process takes on the whole data",
            )
    if planned:  # assumed all at once: the divergence analysis is computed again once, not per value
        divergence.assume_reduced(planned)
        facts.node_rewrites.update(planned)


def averages_read(recording: Recording, test: cst.BaseExpression) -> list[tuple[cst.BaseExpression, str]]:
    """The average values the names in ``test`` are assigned, in its function, where every one of
    their assignments is such an average that may be reduced there."""
    source = recording.analysis.source
    function = source.enclosing_function(test)
    found: list[tuple[cst.BaseExpression, str]] = []
    for name in {n.value for n in of_types(test, cst.Name)}:
        bindings = [(s, v) for s, v in source.assignments.get(name, []) if source.enclosing_function(s) is function]
        if bindings and all(v is not None and average(v) and reducible_at(recording, s) for s, v in bindings):
            found += [(v, name) for _, v in bindings if v is not None]
    return found


def average(value: cst.BaseExpression) -> bool:
    """``total / len(loader)``, ``100.0 * correct / total``, ``meter.avg``, ``np.mean(losses)``,
    ``torch.stack(losses).mean().item()``."""
    if isinstance(value, cst.Call) and attribute_name(value.func) == "item" and not value.args:
        value = value.func.value  # type: ignore[attr-defined]
    if isinstance(value, cst.BinaryOperation):
        return isinstance(value.operator, cst.Divide)
    if isinstance(value, cst.Attribute):
        return value.attr.value == "avg"
    if isinstance(value, cst.Call):
        func = value.func
        return (func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else "") in _MEANS
    return False


def reducible_at(recording: Recording, statement: cst.CSTNode) -> bool:
    """Every rank runs ``statement`` the same number of times: on every rank, under no decision
    the ranks take apart, in no loop over a training source (its batches, one per rank's step)."""
    context = recording.analysis.context
    if not context.every_rank(statement) or context.divergent_condition(statement) is not None:
        return False
    dataflow = recording.analysis.dataflow
    for ancestor in recording.ancestors(statement):
        if isinstance(ancestor, cst.FunctionDef):
            return True
        if isinstance(ancestor, cst.For) and any(s.role is not Role.EVAL for s in dataflow.sources_of(ancestor.iter)):
            return False
        if isinstance(ancestor, (cst.For, cst.While)) and context.divergence.count_why(ancestor) is not None:
            return False
    return True
