"""``ReduceLROnPlateau.step(metric)`` with a metric the ranks may compute differently (a loss
summed over each rank's own shard): each rank would lower its learning rate at its own epoch,
the optimizers would then step with different rates, and the parameters would drift apart while
DDP averages their gradients -- silently. The metric is averaged over the ranks first
(``ddpify.mean_over_ranks(metric)``, a no-op with one process), so every rank takes the same
decision; with ``threshold_mode="rel"`` (the default) the mean decides as the whole-data sum
would. A metric every rank computes alike (a full evaluation) is left as it is."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, is_simple_reference


def plan(recording: Recording, facts: Facts) -> None:
    if not (facts.wraps_models() or recording.existing_wraps):
        return  # no DDP model: each rank trains its own, nothing to keep in step
    source = recording.analysis.source
    schedulers = {
        key
        for key, bindings in source.assignments.items()
        if bindings and all(isinstance(v, cst.Call) and source.qualified(v.func) & names.METRIC_SCHEDULERS for _, v in bindings)
    }
    for call in source.calls_by_callee.get("step", []):
        func = call.func
        if not (isinstance(func, cst.Attribute) and is_simple_reference(func.value) and code(func.value) in schedulers):
            continue
        metric = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "metrics"), None)
        if metric is None or recording.analysis.context.uniform(metric) or _averaged(recording, metric):
            continue
        facts.node_rewrites[metric] = NodeRewrite(
            rewrites_io.mean_over_ranks,
            f"{code(func.value)}.step({code(metric)}): the metric averaged over the ranks (ddpify.mean_over_ranks), "
            "so every rank lowers the learning rate at the same epoch",
        )


def _averaged(recording: Recording, metric: cst.BaseExpression) -> bool:
    """``ddpify.mean_over_ranks(...)`` already (a converted script)."""
    return isinstance(metric, cst.Call) and f"{names.RUNTIME_MODULE}.mean_over_ranks" in recording.qualified(metric.func)
