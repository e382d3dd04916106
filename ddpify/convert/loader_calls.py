"""How one ``DataLoader(...)`` call is rewritten, by the role ``planners.loaders`` gave it:
sharded (``ddpify.distributed_loader``), left whole for evaluation, kept (a report item says
why), or decided at run time (``only_when_training=True``), each with its report lines."""

from __future__ import annotations

from typing import Protocol

import libcst as cst

from ddpify.convert import rewrites
from ddpify.convert.fact_types import LoaderFact
from ddpify.findings import ManualItem


class Reporter(Protocol):
    """What the rewrite needs of the transformer: its option and its report."""

    per_process_batch: bool
    manual: list[ManualItem]

    def note(self, node: cst.CSTNode, what: str) -> None: ...

    def line(self, node: cst.CSTNode) -> int: ...


def rewrite(transformer: Reporter, fact: LoaderFact, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    label = fact.key or ("DataLoader" if fact.sharded_when is None else f"DataLoader for {fact.sharded_when}")
    if fact.role == "eval":
        transformer.note(original, f"{label} is an evaluation loader ({fact.reason}): left unsharded, every rank evaluates the full set")
        return updated
    if fact.role == "kept":  # a report item says why (planners.loaders)
        return updated
    per_process = transformer.per_process_batch or fact.batch_used_at is not None
    if fact.role == "decided":
        transformer.note(
            original,
            f"{label} is sharded for the passes that train, decided at run time (gradients on, a wrapped model in train "
            f"mode; the whole dataset otherwise): the code does not show whether it trains: {fact.reason}",
        )
        return rewrites.distributed_loader(updated, per_process_batch=per_process, only_when_training=True)
    if fact.batch_used_at is not None and not transformer.per_process_batch:
        transformer.manual.append(
            ManualItem(
                transformer.line(original),
                f"{fact.batch_expression} is also used at line {fact.batch_used_at}, where it may stand for the length of "
                "every batch (a tensor size, a count); split per rank it would no longer match the batches there, so this "
                "loader keeps the per-process batch (and where one process makes only full batches but a rank's shard "
                "does not, each rank drops its last partial batch at run time)",
                f"effective batch = {fact.batch_expression} x world_size: scale the learning rate, or use the real batch length there and convert again",
            )
        )
    transformer.note(
        original,
        f"{label} gets a DistributedSampler ({fact.reason}); {'per-process batch kept (effective batch x world_size)' if per_process else 'global batch preserved: per-rank batch = batch // world_size' + _indivisible(original)}",
    )
    if fact.sampler_given:
        transformer.note(original, f"{label}: your sampler is kept and sharded across ranks")
    if rewrites.has_keyword(original, "batch_sampler"):
        transformer.manual.append(
            ManualItem(
                transformer.line(original),
                f"{label} takes a batch_sampler: the batches it makes are shared out whole (each rank takes every "
                "world_size-th batch), so world_size batches train at once: the global batch grows by world_size",
                "scale the learning rate, or make the batch sampler's batches world_size times smaller",
            )
        )
    sharded = rewrites.distributed_loader(updated, per_process_batch=per_process)
    if fact.sharded_when is not None:  # one DataLoader of a dict comprehension, for some keys
        return rewrites.chosen(cst.parse_expression(fact.sharded_when), sharded, updated)
    return sharded


def _indivisible(call: cst.Call) -> str:
    """What the report adds when the batch size, a number written in the call, does not divide
    by a common process count: the runtime would stop there (``ValueError``) rather than change
    the global batch."""
    given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "batch_size"), None)
    if given is None and len(call.args) > 1 and call.args[1].keyword is None and not call.args[1].star:
        given = call.args[1].value
    if not isinstance(given, cst.Integer):
        return ""
    batch = int(given.evaluated_value)
    failing = [n for n in (2, 4, 8) if batch % n]
    if not failing:
        return ""
    counts = " or ".join(map(str, failing))
    return (
        f"; batch_size {batch} does not divide by {counts} processes: such runs stop with a ValueError (use a batch size "
        "divisible by the process count, or convert with --per-process-batch)"
    )
