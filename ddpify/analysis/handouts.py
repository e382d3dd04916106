"""Functions that hand out a batch taken inside them: a prefetcher's ``next()`` that returns
``next(self.it)``, or one that returns the ``self.`` attributes a ``preload()`` stores the
batch in (apex's ``data_prefetcher``). The batch is then used where those functions are
called, which is where ``DataFlow`` looks for the backward that makes its loader train."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ddpify.analysis.batches import Batches
from ddpify.analysis.values import Values
from ddpify.tree import cstutil


def handing_out(values: Values, batches: Batches, call: cst.Call, statements: Sequence[cst.CSTNode]) -> list[cst.FunctionDef]:
    """The functions whose calls give out the batch ``call`` takes; ``statements``: the rest
    of its function from the statement holding it."""
    source = values.source
    function = source.enclosing_function(call)
    if function is None or values.is_generator(function):
        return []
    if batches.reach(statements, seeds=(call,)).returns:
        return [function]
    return [method for method, reads in _reading_methods(values, call, function) if batches.reach(_body(method), seeds=reads).returns]


def _reading_methods(values: Values, call: cst.Call, function: cst.FunctionDef) -> list[tuple[cst.FunctionDef, tuple[cst.Attribute, ...]]]:
    """The other methods of ``function``'s class that read the ``self.`` attributes the
    assignment of ``call`` stores (``self.next_input, self.next_target = next(self.loader)``)."""
    source = values.source
    statement = source.parent(call)
    klass = source.enclosing_class(function)
    if not isinstance(statement, cst.Assign) or statement.value is not call or klass is None:
        return []
    stored = {a.attr.value for t in statement.targets for a in cstutil.of_types(t.target, cst.Attribute) if _on_self(a)}
    found = []
    for method in cstutil.of_types(klass.body, cst.FunctionDef):
        reads = tuple(
            a for a in cstutil.of_types(method.body, cst.Attribute) if _on_self(a) and a.attr.value in stored and not _stored_to(values, a)
        )
        if reads and method is not function:
            found.append((method, reads))
    return found


def _stored_to(values: Values, node: cst.CSTNode) -> bool:
    """Whether ``node`` is (part of) an assignment target, not a read."""
    for ancestor in values.source.ancestors(node):
        if isinstance(ancestor, cst.AssignTarget):
            return True
        if isinstance(ancestor, cst.BaseSmallStatement):
            return False
    return False


def _on_self(node: cst.Attribute) -> bool:
    return isinstance(node.value, cst.Name) and node.value.value == "self"


def _body(function: cst.FunctionDef) -> list[cst.CSTNode]:
    body = function.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
