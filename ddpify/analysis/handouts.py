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


def project_object_handing_out(
    values: Values, value: cst.BaseExpression, known: Sequence[cst.CSTNode]
) -> tuple[cst.Call, cst.Call, str] | None:
    """``train_dataset.get_batch()`` with ``train_dataset`` made once by a class (or function)
    of the project's modules (``Batch_Balanced_Dataset(opt)``, which keeps DataLoaders and
    takes the next batch of each): the call, the construction that made the object (not one of
    ``known``) and a note for the report. The batches come from what that object keeps, which
    this file does not show."""
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) or not isinstance(value.func.value, cst.Name):
        return None
    if values.callees(value):
        return None
    origins = values.origins(value.func.value)
    made = origins[0].node if len(origins) == 1 and origins[0].known else None
    if not isinstance(made, cst.Call) or made in known or values.source.project_call(made) is None:
        return None
    note = f"; it comes from {cstutil.code(value)[:50]} of an object made by {cstutil.code(made.func)}() of another file"
    return value, made, note
