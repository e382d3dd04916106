"""What a call is: the last name of its callee, a ``torch.distributed`` or ``ddpify.runtime``
function, a collective every rank must reach; its keyword arguments and literal flags; and the
module's calls (from the flat tree all rules of a batch share)."""

from __future__ import annotations

from typing import TypeVar

import libcst as cst

from ddpify.analysis.collectives import COLLECTIVES, DIST
from ddpify.check.rule import Rule
from ddpify.convert import names
from ddpify.tree import cstutil

N = TypeVar("N", bound=cst.CSTNode)

RUNTIME = names.RUNTIME_MODULE + "."

# ddpify.runtime helpers with a collective inside (a barrier).
RUNTIME_COLLECTIVES = frozenset({"save", "barrier"})


def dist_function(rule: Rule, call: cst.Call) -> str | None:
    """``all_reduce`` for ``dist.all_reduce(...)`` / ``torch.distributed.all_reduce(...)``."""
    for name in rule.qualified(call):
        if name.startswith(DIST):
            rest = name[len(DIST) :]
            if rest.startswith("distributed_c10d."):
                rest = rest[len("distributed_c10d.") :]
            if "." not in rest:
                return rest
    return None


def runtime_function(rule: Rule, call: cst.Call) -> str | None:
    """``save`` for ``ddpify.save(...)`` where ``ddpify`` is ``ddpify.runtime``."""
    for name in rule.qualified(call):
        if name.startswith(RUNTIME) and "." not in name[len(RUNTIME) :]:
            return name[len(RUNTIME) :]
    return None


def collective(rule: Rule, call: cst.Call) -> str | None:
    """A printable name when ``call`` is a collective every rank must reach, else None."""
    function = dist_function(rule, call)
    if function in COLLECTIVES:
        return f"dist.{function}"
    function = runtime_function(rule, call)
    if function in RUNTIME_COLLECTIVES and not is_false(cstutil.keyword_value(call, "wait")):
        return f"ddpify.{function}"  # `ddpify.save(..., wait=False)` waits for no one
    return None


def nodes(module: cst.Module, kind: type[N]) -> list[N]:
    """Every node of type ``kind`` in ``module``, in source order, from the flat tree that all
    rules of the batch share (libcst matchers walk the whole tree on every call)."""
    return cstutil.of_types(module, kind)


def every_call(module: cst.Module) -> list[cst.Call]:
    """Every call of the module, in source order."""
    return nodes(module, cst.Call)


def keyword_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def is_true(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "True"


def is_false(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"
