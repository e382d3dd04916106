"""Tests of whether a model is wrapped, and what they say in each branch.

``model.module.state_dict() if is_parallel(model) else model.state_dict()`` is the usual way to
save the plain weights whatever the launch: the ``else`` branch only runs with the plain model,
the body only with the wrapper. Recognised tests of ``model``: ``hasattr(model, "module")``,
``isinstance(model, DDP)`` (also a tuple with ``DataParallel``), ``type(model) in (...)`` /
``is`` / ``==``, ``not`` of any of them, and a call ``f(model)`` of a function of this file
that returns such a test of its first parameter, or of a function named like the common
helpers (``is_parallel``, ``is_ddp``, ``is_wrapped``), which usually live in another module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.tree.cstutil import code

if TYPE_CHECKING:
    from ddpify.analysis.source import Source

_WRAPPERS = frozenset({"DistributedDataParallel", "DataParallel"})
_NAMED = re.compile(r"^(is_(data_)?parallel|is_ddp(_model)?|is_wrapped(_model)?|is_distributed_model)$")
_IS = (cst.In, cst.Is, cst.Equal)
_IS_NOT = (cst.NotIn, cst.IsNot, cst.NotEqual)


def wrapped_here(source: Source, node: cst.CSTNode, name: str) -> bool | None:
    """What the innermost wrap test of ``name`` on the way to ``node`` (in its function) says:
    True, ``name`` is the wrapper there; False, the plain model; None, no such test."""
    child = node
    for parent in source.ancestors(node):
        if isinstance(parent, (cst.If, cst.IfExp)) and (child is parent.body or child is parent.orelse):
            says = tests_wrapped(source, parent.test, name)
            if says is not None:
                return says if child is parent.body else not says
        if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            break
        child = parent
    return None


def tests_wrapped(source: Source, test: cst.BaseExpression, name: str, depth: int = 0) -> bool | None:
    """True: ``test`` holds where ``name`` is wrapped; False: where it is not; None: it is no
    wrap test of ``name``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = tests_wrapped(source, test.expression, name, depth)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if _type_of(test.left, name) and _names_wrapper(source, target.comparator):
            return True if isinstance(target.operator, _IS) else False if isinstance(target.operator, _IS_NOT) else None
        return None
    if not isinstance(test, cst.Call) or not test.args or code(test.args[0].value) != name:
        return None
    callee = code(test.func)
    if callee == "hasattr":
        second = test.args[1].value if len(test.args) == 2 else None
        return True if isinstance(second, cst.SimpleString) and second.evaluated_value == "module" else None
    if callee == "isinstance":
        return True if len(test.args) == 2 and _names_wrapper(source, test.args[1].value) else None
    if _NAMED.match(callee.rsplit(".", 1)[-1]):
        return True
    functions = source.functions_called(test)
    if len(functions) != 1 or depth > 0 or not functions[0].params.params:
        return None
    parameter = functions[0].params.params[0].name.value
    returns = [r.value for r in source.of_types_in(functions[0], cst.Return) if r.value is not None]
    says = {tests_wrapped(source, value, parameter, depth + 1) for value in returns}
    return says.pop() if len(says) == 1 else None


def _type_of(node: cst.BaseExpression, name: str) -> bool:
    """``type(name)``."""
    return isinstance(node, cst.Call) and code(node.func) == "type" and len(node.args) == 1 and code(node.args[0].value) == name


def _names_wrapper(source: Source, node: cst.BaseExpression) -> bool:
    """``DDP`` / ``nn.parallel.DistributedDataParallel`` / a tuple holding one."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return any(_names_wrapper(source, element.value) for element in node.elements)
    found = source.qualified(node) or {code(node)}
    return any(n.rsplit(".", 1)[-1] in _WRAPPERS for n in found)
