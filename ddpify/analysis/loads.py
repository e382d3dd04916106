"""Where a ``torch.load`` puts the tensors it reads: a load that names no ``map_location``
puts each tensor back on the device it was saved from (cuda:0 for a checkpoint rank 0 saved),
so every rank that runs it fills GPU 0. One definition for DDP004 and the project summaries
(a ``load_checkpoint(model, path)`` helper of a sibling module loads for its caller)."""

from __future__ import annotations

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


def unmapped_loaders(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """The ``functions`` that load a file with ``torch.load`` and no ``map_location`` on every
    call: not under a test of one of their parameters (``if use_torch:`` of a reader whose
    callers choose)."""
    found = set()
    for function in functions:
        parameters = {p.name.value for p in (*function.params.params, *function.params.kwonly_params, *function.params.posonly_params)}
        for call in source.of_types_in(function, cst.Call):
            assert isinstance(call, cst.Call)
            if (
                source.qualified(call) & TORCH_LOAD
                and not maps_location(call)
                and not _tested_parameter(source, call, function, parameters)
            ):
                found.add(function)
                break
    return found


def _tested_parameter(source: Source, call: cst.Call, function: cst.FunctionDef, parameters: set[str]) -> bool:
    for ancestor in source.ancestors(call):
        if ancestor is function:
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp)) and any(n.value in parameters for n in of_types(ancestor.test, cst.Name)):
            return True
    return False
