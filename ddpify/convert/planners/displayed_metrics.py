"""Averages of the rank's own shard that the script only shows: ``outstr = 'Train %d, loss: %.6f'
% (epoch, train_loss * 1.0 / count)`` after a loop over the sharded training loader (unseen20t
dgcnn, unseen20s lvl1_cls). Each rank averages its own shard, and rank 0 alone prints: the
printed number is no longer the training loss of the epoch, and nothing said so.

Decided: the average becomes ``ddpify.mean_over_ranks(...)``, the mean over the ranks, which on
equal shards is the one-process value, rather than a report line asking for the same edit. It is
one scalar all-reduce per printed value per epoch. Only where a collective is safe: the
statement runs on every rank the same number of times (``reduced_metrics._reducible_at``), so a
per-step print inside the batch loop, or one already behind a rank test, stays rank 0's own.
Only averages (a division, ``.avg``, ``mean()``) inside what is shown: an argument of ``print``
/ a logger / ``tqdm.write``, or a formatted string (``%``, f-string, ``.format``) wherever it goes.
A sum or count, or a division by the whole dataset's size (``shard_sums`` reports those),
stays. A score a library computes from the rank's own arrays (``metrics.accuracy_score(
train_true, train_pred)``, dgcnn) is no mean of per-rank means in general (a balanced accuracy,
an F1): it is reported, with the gather that gives the whole data's score."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.reduced_metrics import average, averages_read, reducible_at
from ddpify.convert.planners.shard_sums import whole_dataset_size
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import attribute_name, code, of_types

_SHOWN_BY = frozenset({"builtins.print", "tqdm.write", "tqdm.tqdm.write", *(f"logging.{m}" for m in ("info", "warning", "debug", "log"))})
_LOG_METHODS = frozenset({"info", "warning", "debug", "log", "cprint"})


def plan(recording: Recording, facts: Facts) -> None:
    if not (facts.wraps_models() or recording.existing_wraps):
        return  # no DDP model: each process shows its whole data
    divergence = recording.analysis.context.divergence
    loaders = {v.key for v in facts.loader_variables}
    planned: dict[cst.CSTNode, NodeRewrite] = {}
    for shown in _shown(recording):
        _report_library_scores(recording, facts, shown)
        for value in _averages_in(recording, shown):
            if value in facts.node_rewrites or value in planned or _whole_dataset_division(recording, value, loaders):
                continue
            why = divergence.why(value)  # the name's bindings were found reducible where assigned
            statement = recording.analysis.source.statement_of(value)
            if why is None or why.kind != "data" or statement is None or not reducible_at(recording, statement):
                continue
            planned[value] = NodeRewrite(
                rewrites_io.mean_over_ranks,
                f"{' '.join(code(value).split())[:60]} is shown for this rank's shard only: ddpify.mean_over_ranks(...) "
                "shows the mean over the ranks, the one-process value",
            )
    if planned:
        divergence.assume_reduced(planned)
        facts.node_rewrites.update(planned)


def _report_library_scores(recording: Recording, facts: Facts, shown: cst.BaseExpression) -> None:
    """``sklearn.metrics.*(y_true, y_pred)`` of this rank's arrays, shown on rank 0 as the epoch's:
    one item per line, naming each such score there."""
    divergence = recording.analysis.context.divergence
    scores = [e.value for e in shown.elements] if isinstance(shown, cst.Tuple) else [shown]
    named = []
    for score in scores:
        if not (isinstance(score, cst.Call) and any(q.startswith("sklearn.metrics.") for q in recording.qualified(score))):
            continue
        why = divergence.why(score)
        statement = recording.analysis.source.statement_of(score)
        if why is not None and why.kind == "data" and statement is not None and reducible_at(recording, statement):
            named.append(f"{code(score.func)}(...)")
    if not named or any(item.line == recording.line(shown) and "rank's own arrays" in item.why for item in facts.manual):
        return
    facts.manual.append(
        ManualItem(
            recording.line(shown),
            f"{', '.join(named)} score this rank's own arrays (its shard of the data), and rank 0 shows them as the whole data's",
            "gather the arrays first (lists = [None] * ddpify.world_size(); torch.distributed.all_gather_object(lists, "
            "arr); arr = np.concatenate(lists)) where every rank runs it, or say in the output that it is rank 0's shard",
        )
    )


def _shown(recording: Recording) -> list[cst.BaseExpression]:
    """What the script shows: the arguments of its output calls and its formatted strings."""
    found: list[cst.BaseExpression] = []
    for call in recording.analysis.source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        qualified = recording.qualified(call)
        logger = attribute_name(call.func) in _LOG_METHODS and not recording.analysis.source.calls_imported_module(call)
        if qualified & _SHOWN_BY or logger or attribute_name(call.func) == "format":  # not torch.log / math.log
            found += [a.value for a in call.args]
    for node in recording.analysis.source.of_types(cst.BinaryOperation, cst.FormattedString):
        if isinstance(node, cst.FormattedString):
            found += [part.expression for part in node.parts if isinstance(part, cst.FormattedStringExpression)]
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo) and isinstance(node.left, cst.SimpleString):
            found.append(node.right)
    return found


def _averages_in(recording: Recording, shown: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The outermost averages in ``shown`` (``loss / count``, not its parts), and those a shown
    name is assigned in its function (``avg = total / count; print(avg)``)."""
    if average(shown):
        return [shown]
    if isinstance(shown, cst.Tuple):
        return [a for element in shown.elements for a in _averages_in(recording, element.value)]
    if isinstance(shown, cst.Name):
        return [value for value, _ in averages_read(recording, shown)]
    return []


def _whole_dataset_division(recording: Recording, value: cst.BaseExpression, loaders: set[str]) -> bool:
    """``correct / len(train_set)``, ``hits / sizes["train"]``: divided by every sample's count
    (``shard_sums`` reports it; a mean over the ranks would still be 1/world_size of it)."""
    divisions = [d for d in [value, *of_types(value, cst.BinaryOperation)] if isinstance(d, cst.BinaryOperation)]
    return any(isinstance(d.operator, cst.Divide) and whole_dataset_size(recording, d.right, loaders) for d in divisions)
