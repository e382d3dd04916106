"""Collectives every rank of the group must reach, and the project helpers that run one on
every call: ``utils.reduce_mean(loss)`` under ``if rank == 0:`` hangs the job like the
``dist.all_reduce`` inside it would. One definition for the linter and the project summaries."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.module_facts import through_calls
from ddpify.tree.cstutil import callee_name, code, of_types

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
        if found is not None and not context.local(call).selection.rank_dependent and _opted_in(source, function, call) is None:
            return found
    return None


_FALSY = frozenset({"False", "None", "0"})


def _opted_in(source: Source, function: cst.FunctionDef, call: cst.Call) -> str | None:
    """The option ``call`` waits for, when it runs only where the caller asks: under a test of a
    parameter defaulting to False/None/0 (``def log(msg, sync=False): if sync: dist.barrier()``)
    or of a keyword read with such a default (mlperf's ``if kwargs.pop("sync", False):``)."""
    params = function.params
    off = {p.name.value for p in (*params.params, *params.kwonly_params) if p.default is not None and code(p.default) in _FALSY}
    keywords = params.star_kwarg.name.value if isinstance(params.star_kwarg, cst.Param) else None
    for ancestor in source.ancestors(call):
        if ancestor is function:
            return None
        if not isinstance(ancestor, cst.If) or not any(node is ancestor.body for node in source.ancestors(call)):
            continue
        named = next((n.value for n in of_types(ancestor.test, cst.Name) if n.value in off), None)
        if named is not None:
            return named
        for read in of_types(ancestor.test, cst.Call):
            func, key = read.func, read.args[0].value if read.args else None
            if (
                keywords is not None
                and isinstance(func, cst.Attribute)
                and code(func.value) == keywords
                and func.attr.value in ("get", "pop")
                and isinstance(key, cst.SimpleString)
                and (len(read.args) < 2 or code(read.args[1].value) in _FALSY)
            ):
                return str(key.evaluated_value)
    return None


def module_opt_in_collectives(
    source: Source, functions: list[cst.FunctionDef], every: dict[cst.FunctionDef, str]
) -> dict[cst.FunctionDef, tuple[str, str]]:
    """For each of ``functions`` whose collective runs only when its caller passes an option
    (``log(msg, sync=True)``): the option and the collective; also a function that hands its
    ``**kwargs`` on to one (mlperf's ``mllog_end(**kwargs)`` -> ``_mllog_print``). ``every``:
    the module's functions with a collective on every call (``module_collectives``)."""

    def plain(call: cst.Call) -> str | None:
        helper = source.project.helper(call)
        if helper is not None:
            return helper.collective
        own = [every[f] for f in source.functions_called(call) if f in every]
        return dist_collective(source.qualified(call)) or (own[0] if own else None)

    def answer(function: cst.FunctionDef, called: Callable[[cst.Call], tuple[str, str] | None]) -> tuple[str, str] | None:
        keywords = function.params.star_kwarg.name.value if isinstance(function.params.star_kwarg, cst.Param) else None
        for call in source.of_types_in(function, cst.Call):
            if source.enclosing_function(call) is not function:
                continue
            found = plain(call)
            option = _opted_in(source, function, call) if found is not None else None
            if found is not None and option is not None:
                return option, found
            handed = called(call) if found is None and keywords is not None else None
            if handed is not None and any(a.star == "**" and code(a.value) == keywords for a in call.args):
                return handed
        return None

    return through_calls(source, functions, answer, lambda helper: helper.opt_in_collective)


def opt_in_collective(source: Source, call: cst.Call) -> str | None:
    """The collective a project helper runs on this call because the call passes the option it
    waits for (``log_event(key, sync=True)``), or None."""
    helper = source.project.helper(call)
    if helper is None or helper.opt_in_collective is None:
        return None
    option, found = helper.opt_in_collective
    given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == option), None)
    return found if given is not None and code(given) not in _FALSY else None


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
