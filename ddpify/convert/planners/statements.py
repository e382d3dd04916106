"""What a statement binds and what runs in it: shared by the planners that place new code
(model wraps) and those that read loops (set_epoch, accumulation, evaluation functions)."""

from __future__ import annotations

from typing import Any, overload

import libcst as cst

from ddpify.tree.cstutil import N, code, of_types


def targets(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """Everything ``statement`` binds: plain, annotated and augmented (``step += 1``) targets."""
    found: list[cst.BaseExpression] = []
    for assign in of_types(statement, cst.Assign, cst.AnnAssign, cst.AugAssign):
        if isinstance(assign, cst.AugAssign):
            found.append(assign.target)
        elif isinstance(assign, cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, (cst.Tuple, cst.List)):
                    found.extend(e.value for e in target.target.elements)
                else:
                    found.append(target.target)
        elif isinstance(assign, cst.AnnAssign):
            found.append(assign.target)
    return found


def assigns(statement: cst.CSTNode, key: str) -> bool:
    """Whether ``statement`` binds ``key`` outside any nested function, class or loop."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While)):
        return False
    return any(code(target) == key for target in targets(statement))


def assigns_locally(function: cst.FunctionDef | None, key: str) -> bool:
    """Whether ``function``'s body binds ``key`` anywhere (False for None, the module)."""
    if function is None:
        return False
    return any(code(target) == key for target in targets(function.body))


@overload
def find_outside_definitions(statement: cst.CSTNode, kind: type[N], /) -> list[N]: ...
@overload
def find_outside_definitions(statement: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]: ...
def find_outside_definitions(statement: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[Any]:
    """Nodes of these classes in ``statement`` that run there: not inside a nested def,
    class or lambda."""
    definitions = of_types(statement, cst.FunctionDef, cst.ClassDef, cst.Lambda)
    inside = {id(n) for d in definitions for n in of_types(d, *kinds)}
    return [n for n in of_types(statement, *kinds) if id(n) not in inside]
