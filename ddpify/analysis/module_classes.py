"""What a project module's ``nn.Module`` classes tell the files that build them: submodules a
forward never uses, outputs it drops, every submodule it registers (for the summary
``ddpify.analysis.project.Helper`` of ``Class.__init__``, and of the functions that return one)."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.callgraph import CallGraph
from ddpify.analysis.dropped_outputs import project_dropped_outputs
from ddpify.analysis.modules import project_registered_submodules, project_unused_submodules
from ddpify.analysis.source import Source


def class_facts(source: Source) -> dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]]:
    """For each module class (``Class.__init__``): the outputs its forward drops
    (``ddpify.analysis.dropped_outputs``) and the submodules it registers, when all are known
    (``ddpify.analysis.modules.registered_submodules``)."""
    if not source.of_types(cst.ClassDef):
        return {}
    graph = CallGraph(source)
    dropped, registered = project_dropped_outputs(graph), project_registered_submodules(graph)
    return {name: (dropped.get(name, ()), registered.get(name)) for name in {*dropped, *registered}}


def unused_submodules_of(source: Source, tops: list[cst.FunctionDef]) -> dict[str, tuple[str, ...]]:
    """``ddpify.analysis.modules.project_unused_submodules``, for modules that define a class or
    return what a call makes."""
    if not source.of_types(cst.ClassDef) and not any(isinstance(r.value, (cst.Call, cst.Name)) for r in source.of_types(cst.Return)):
        return {}
    return project_unused_submodules(CallGraph(source), tops)
