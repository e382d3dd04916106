"""Where a ``torch.load`` puts the tensors it reads: a load that names no ``map_location``
puts each tensor back on the device it was saved from (cuda:0 for a checkpoint rank 0 saved),
so every rank that runs it fills GPU 0. One definition for DDP004 and the project summaries
(a ``load_checkpoint(model, path)`` helper of a sibling module loads for its caller)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.tree.cstutil import keyword_value, of_types

if TYPE_CHECKING:
    from ddpify.analysis.source import Source

TORCH_LOAD = frozenset({"torch.load"})


def maps_location(call: cst.Call) -> bool:
    """A load that says where its tensors go: a second positional argument, a
    ``map_location=``, or arguments spread from elsewhere (``**kwargs``)."""
    return (
        len([a for a in call.args if a.keyword is None]) >= 2
        or keyword_value(call, "map_location") is not None
        or any(a.star for a in call.args)
    )


# Where a loaded random-number state goes: CPU tensors and plain objects, whatever device saved them.
RNG_STATE_SETTERS = frozenset(
    {
        "torch.set_rng_state",
        "torch.random.set_rng_state",
        "torch.cuda.set_rng_state",
        "torch.cuda.set_rng_state_all",
        "torch.cuda.random.set_rng_state",
        "numpy.random.set_state",
        "random.setstate",
    }
)


def unmapped_loaders(source: Source, functions: list[cst.FunctionDef], per_rank: Callable[[cst.Call], bool]) -> set[cst.FunctionDef]:
    """The ``functions`` that load a file with ``torch.load`` and no ``map_location`` on every
    call: not under a test of one of their parameters (``if use_torch:`` of a reader whose
    callers choose), not a file per rank (``per_rank``: each rank reads what it saved from its
    own device), not random-number states only (``rng_states_only``)."""
    found = set()
    for function in functions:
        parameters = {p.name.value for p in (*function.params.params, *function.params.kwonly_params, *function.params.posonly_params)}
        for call in source.of_types_in(function, cst.Call):
            assert isinstance(call, cst.Call)
            if (
                source.qualified(call) & TORCH_LOAD
                and not maps_location(call)
                and not _tested_parameter(source, call, function, parameters)
                and not per_rank(call)
                and not rng_states_only(source, call)
            ):
                found.add(function)
                break
    return found


def rng_states_only(source: Source, call: cst.Call) -> bool:
    """What ``call`` loads goes only into random-number-state setters (``torch.random.set_rng_state(
    state["rng_torch_cpu"])``, ``torch.cuda.set_rng_state``, ``np.random.set_state``): RNG states
    are CPU tensors and plain objects, so the load fills no GPU (llm-baselines' ``load_worker_state``)."""
    statement = source.parent(call)
    if _in_setter(source, call):
        return True
    if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name)):
        return False
    name = statement.targets[0].target.value
    scope = source.enclosing_function(call)
    uses = [
        n
        for n in (source.of_types_in(scope, cst.Name) if scope is not None else source.of_types(cst.Name))
        if isinstance(n, cst.Name) and n.value == name and n is not statement.targets[0].target and source.enclosing_function(n) is scope
    ]
    return bool(uses) and all(_in_setter(source, n) for n in uses)


def _in_setter(source: Source, node: cst.CSTNode) -> bool:
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, cst.Call) and source.qualified(ancestor) & RNG_STATE_SETTERS:
            return True
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False


def _tested_parameter(source: Source, call: cst.Call, function: cst.FunctionDef, parameters: set[str]) -> bool:
    for ancestor in source.ancestors(call):
        if ancestor is function:
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp)) and any(n.value in parameters for n in of_types(ancestor.test, cst.Name)):
            return True
    return False
