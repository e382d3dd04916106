"""``ReduceLROnPlateau.step(metric)`` under DDP: each rank lowers its learning rate when its own
metric stops improving. Where the ranks compute the metric differently (a loss summed over each
rank's own shard; an evaluation whose augmentation, dropout or sampling draws from per-rank
streams, which the code does not show) they would lower it at different epochs, the optimizers
would then step with different rates, and the parameters would drift apart while DDP averages
their gradients -- silently. The metric is averaged over the ranks (``ddpify.mean_over_ranks``,
a no-op with one process) wherever every rank steps the scheduler, whatever the metric: the
same decision on every rank, from the mean (with ``threshold_mode="rel"``, the default, as the
whole-data sum would decide), at the cost of one scalar all-reduce per step. A scheduler is
known by its construction (``ReduceLROnPlateau(...)``) or by the script's own test of its type
around the step (``if type(self.scheduler) == ReduceLROnPlateau:``: built by a factory of
another file). A step that only some ranks reach is left alone: a collective there would hang."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, is_simple_reference


def plan(recording: Recording, facts: Facts) -> None:
    if not (facts.wraps_models() or recording.existing_wraps or facts.models_from_caller):
        return  # no DDP model: each rank trains its own, nothing to keep in step
    source, context = recording.analysis.source, recording.analysis.context
    schedulers = {
        key
        for key, bindings in source.assignments.items()
        if bindings and all(isinstance(v, cst.Call) and source.qualified(v.func) & names.METRIC_SCHEDULERS for _, v in bindings)
    }
    for call in source.calls_by_callee.get("step", []):
        func = call.func
        if not (isinstance(func, cst.Attribute) and is_simple_reference(func.value)):
            continue
        scheduler = code(func.value)
        if scheduler not in schedulers and not _tested_as_plateau(recording, call, scheduler):
            continue
        metric = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "metrics"), None)
        if metric is None or _averaged(recording, metric) or not context.every_rank(call) or context.divergent_condition(call):
            continue
        facts.node_rewrites[metric] = NodeRewrite(
            rewrites_io.mean_over_ranks,
            f"{scheduler}.step({code(metric)}): the metric averaged over the ranks (ddpify.mean_over_ranks), "
            "so every rank lowers the learning rate at the same epoch",
        )


def _tested_as_plateau(recording: Recording, call: cst.Call, scheduler: str) -> bool:
    """``call`` is in the body of an ``if`` whose test, or one of its ``and`` terms, tests
    ``scheduler``'s type against a metric scheduler (``type(s) == ReduceLROnPlateau``,
    ``isinstance(s, lr_scheduler.ReduceLROnPlateau)``); its ``else`` steps another kind."""
    child: cst.CSTNode = call
    for ancestor in recording.analysis.source.ancestors(call):
        if isinstance(ancestor, cst.FunctionDef):
            return False
        if (
            isinstance(ancestor, cst.If)
            and child is ancestor.body
            and any(_type_test(recording, t, scheduler) for t in _terms(ancestor.test))
        ):
            return True
        child = ancestor
    return False


def _terms(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The terms an ``and`` chain requires (``a and (b and c)`` -> a, b, c)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_terms(test.left), *_terms(test.right)]
    return [test]


def _type_test(recording: Recording, test: cst.CSTNode, scheduler: str) -> bool:
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2:
        subject, kind = test.args[0].value, test.args[1].value
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)):
        left, kind = test.left, test.comparisons[0].comparator
        if not (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "type" and left.args):
            return False
        subject = left.args[0].value
    else:
        return False
    return code(subject) == scheduler and bool(recording.qualified(kind) & names.METRIC_SCHEDULERS)


def _averaged(recording: Recording, metric: cst.BaseExpression) -> bool:
    """``ddpify.mean_over_ranks(...)`` already (a converted script)."""
    return isinstance(metric, cst.Call) and f"{names.RUNTIME_MODULE}.mean_over_ranks" in recording.qualified(metric.func)
