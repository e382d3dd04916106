"""Inputs a training loop sets to None on some steps (``if np.random.random() < 0.1: labels =
None`` before ``model(x_t, t, labels)``, classifier-free guidance): a model that then skips the
layers using the input gives them no gradient on those steps, and the ranks skip on
different steps, so DDP needs ``find_unused_parameters=True``."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import libcst as cst

from ddpify.analysis.dataflow import DataFlow
from ddpify.tree import cstutil


def sometimes_none_input(dataflow: DataFlow, spellings: Collection[str]) -> tuple[str, int] | None:
    """An argument of a training forward of the model spelled ``spellings`` that the loop
    around it sets to None under a condition first: the argument and the line of ``= None``."""
    source = dataflow.source
    for call in source.of_types(cst.Call):
        if cstutil.code(call.func) not in spellings or not dataflow.on_training_path(call):
            continue
        loop = next((a for a in source.ancestors(call) if isinstance(a, (cst.For, cst.While))), None)
        if loop is None:
            continue
        arguments = {cstutil.code(a.value) for a in call.args if isinstance(a.value, cst.Name)}
        for assign in source.of_types_in(loop, cst.Assign):
            target = cstutil.code(assign.targets[0].target) if len(assign.targets) == 1 else None
            if target not in arguments or cstutil.code(assign.value) != "None":
                continue
            line = source.line(assign)
            if line < source.line(call) and _conditional_in(source.ancestors(assign), loop):
                return target, line
    return None


def _conditional_in(ancestors: Iterable[cst.CSTNode], loop: cst.CSTNode) -> bool:
    """An ``if`` comes before ``loop`` among the ancestors (inside the loop)."""
    for ancestor in ancestors:
        if ancestor is loop:
            return False
        if isinstance(ancestor, cst.If):
            return True
    return False
