"""Models trained inside another module: a student handed to a distillation module
(``Distiller(t_net, s_net)``, whose ``__init__`` keeps it as ``self.s_net``), a network handed
to a ``ModelWithLoss(net, criterion)``. The training calls the holder, never the model itself,
so a DDP wrapper around the model alone would never run its forward and would average
nothing; the holder is what DDP wraps, and its wrap averages the model's gradients too.

The holder is the model then: the optimizer that steps the held model's parameters steps a
part of the holder (``ModelFlow`` claims the holder's construction with that part), and the
held model itself is not wrapped (``Model.trained_inside``)."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ddpify.analysis.modules import is_module_class
from ddpify.analysis.values import Occurrence, Values


def holding_construction(values: Values, occurrences: Iterable[Occurrence]) -> tuple[cst.Call, str] | None:
    """The construction of one of the file's module classes that receives the model and keeps
    it as an attribute of its own (the flow of the model reaches ``self.<attribute>`` inside
    that class): the call and the attribute."""
    nodes = [o.node for o in occurrences]
    for node in nodes:
        argument = values.source.parent(node)
        call = values.source.parent(argument) if isinstance(argument, cst.Arg) and argument.value is node else None
        if not isinstance(call, cst.Call):
            continue
        klass = values.class_called(call)
        if klass is None or not is_module_class(values, klass):
            continue
        for kept in nodes:
            if (
                isinstance(kept, cst.Attribute)
                and isinstance(kept.value, cst.Name)
                and kept.value.value == "self"
                and values.inside(kept, klass)
            ):
                return call, kept.attr.value
    return None
