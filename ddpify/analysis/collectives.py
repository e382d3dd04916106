"""Collectives every rank of the group must reach, and the project helpers that run one on
every call: ``utils.reduce_mean(loss)`` under ``if rank == 0:`` hangs the job like the
``dist.all_reduce`` inside it would. One definition for the linter and the project summaries."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.module_facts import through_calls
from ddpify.tree.cstutil import callee_name

if TYPE_CHECKING:
    from ddpify.analysis.context import Context
    from ddpify.analysis.source import Source

DIST = "torch.distributed."

# torch.distributed calls that every rank of the group must make, or all of them wait.
COLLECTIVES = frozenset(
    {
        "barrier",
        "monitored_barrier",
        "all_reduce",
        "all_gather",
        "all_gather_object",
        "all_gather_into_tensor",
        "_all_gather_base",
        "broadcast",
        "broadcast_object_list",
        "reduce",
        "gather",
        "gather_object",
        "scatter",
        "scatter_object_list",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "_reduce_scatter_base",
        "all_to_all",
        "all_to_all_single",
    }
)


# Calls that combine values across processes: torch.distributed's own, and the usual helpers
# scripts wrap them in (pytorch/examples AverageMeter.all_reduce, Horovod metric_average,
# DETR reduce_dict, Accelerate gather_for_metrics, torchvision synchronize_between_processes).
REDUCTIONS = frozenset(
    {
        "all_reduce",
        "reduce",
        "all_gather",
        "all_gather_object",
        "all_gather_into_tensor",
        "gather",
        "gather_object",
        "reduce_scatter",
        "reduce_scatter_tensor",
    }
)

REDUCTION_HELPER = re.compile(
    r"(^|_)(all_?reduce|all_?gather|allreduce|allgather)($|_)|^reduce_(\w+_)?(tensors?|mean|sum|dict|values?|loss(es)?|metrics?|outputs?|scalars?|stats)$|^mean_over_ranks$|"
    r"^gather_for_metrics$|^synchronize_between_processes$|^metric_average$|^(sync|reduce)_across_\w+$",
    re.I,
)


def dist_collective(qualified: set[str]) -> str | None:
    """``dist.all_reduce`` for a call whose qualified names include ``torch.distributed.all_reduce``."""
    for name in qualified:
        if name.startswith(DIST):
            rest = name[len(DIST) :].removeprefix("distributed_c10d.")
            if rest in COLLECTIVES:
                return f"dist.{rest}"
    return None


def module_collectives(source: Source, context: Context, functions: list[cst.FunctionDef]) -> dict[cst.FunctionDef, str]:
    """The collective each of ``functions`` runs on every call (not under a rank test of its
    own), directly, through a function of its module or through a project helper."""
    return through_calls(
        source,
        functions,
        lambda function, called: _runs(source, context, function, called),
        lambda helper: helper.collective,
        lambda call: dist_collective(source.qualified(call)),
    )


def _runs(source: Source, context: Context, function: cst.FunctionDef, called: Callable[[cst.Call], str | None]) -> str | None:
    for call in source.of_types_in(function, cst.Call):
        if source.enclosing_function(call) is not function:
            continue
        found = called(call)
        if found is not None and not context.local(call).selection.rank_dependent:
            return found
    return None


def reduces(source: Source, call: cst.Call) -> bool:
    """``call`` combines values across processes: a ``REDUCTIONS`` call of torch.distributed, a
    helper named like one (``reduce_tensor``), or a project helper that runs one on every call."""
    name = callee_name(call)
    if name is not None and REDUCTION_HELPER.search(name):
        return True
    found = dist_collective(source.qualified(call))
    if found is not None and found.removeprefix("dist.") in REDUCTIONS:
        return True
    helper = source.project.helper(call)
    return helper is not None and helper.collective is not None and helper.collective.removeprefix("dist.") in REDUCTIONS
