"""Where a node sits: its position, its scope (function, lambda, class or module), whether two
nodes are in different branches of one ``if``, inside a function, inside a ``with X():`` block,
or the whole value of an assignment."""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import PositionProvider

from ddpify.check.rule import Rule
from ddpify.tree.cstutil import code, is_simple_reference, of_types


def start(rule: Rule, node: cst.CSTNode) -> tuple[int, int]:
    position = rule.get_metadata(PositionProvider, node).start
    return position.line, position.column


def scope_of(rule: Rule, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost function, lambda or class holding ``node``, else the module."""
    last: cst.CSTNode = node
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return ancestor
        last = ancestor
    return last


def branches_exclusive(rule: Rule, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """True when ``a`` and ``b`` sit in different branches of one ``if``/``a if c else b``."""
    path_a: dict[cst.CSTNode, cst.CSTNode] = {}
    child = a
    for ancestor in rule.ancestors(a):
        path_a[ancestor] = child
        child = ancestor
    child = b
    for ancestor in rule.ancestors(b):
        if ancestor in path_a:
            if isinstance(ancestor, (cst.If, cst.IfExp)):
                sides = {path_a[ancestor], child}
                return len(sides) == 2 and ancestor.test not in sides
            return False
        child = ancestor
    return False


def contradictory(rule: Rule, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` runs only where a condition holds that ``b`` needs false: ``a`` under ``if
    gpus > 1 and cfg.DIST_TRAIN:``, ``b`` in the ``else`` of ``if cfg.DIST_TRAIN:``."""
    held_a, held_b = _conditions(rule, a), _conditions(rule, b)
    return any(held_b.get(atom) is (not holds) for atom, holds in held_a.items())


def _conditions(rule: Rule, node: cst.CSTNode) -> dict[str, bool]:
    """The tests of the ``if`` statements around ``node`` in its function, each with whether
    it holds there: every conjunct of a test whose body holds ``node``; a whole test whose
    ``else`` holds it."""
    found: dict[str, bool] = {}
    child = node
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(ancestor, cst.If):
            if child is ancestor.body:
                for atom in _conjuncts(ancestor.test):
                    found.setdefault(code(atom), True)
            elif child is ancestor.orelse:
                found.setdefault(code(ancestor.test), False)
        child = ancestor
    return found


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_conjuncts(test.left), *_conjuncts(test.right)]
    return [test]


def in_function(rule: Rule, node: cst.CSTNode) -> bool:
    return any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in rule.ancestors(node))


def guarded_by_context(rule: Rule, node: cst.CSTNode, pattern: re.Pattern[str]) -> bool:
    """Inside ``with X():`` where ``X`` matches ``pattern`` (``main_process_first``...)."""
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, cst.With) and any(pattern.search(code(item.item)) for item in ancestor.items):
            return True
    return False


def assigned_to(rule: Rule, node: cst.CSTNode) -> str | None:
    """``x`` when ``node`` is the whole value of ``x = node``."""
    parent = rule.parent(node)
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        if is_simple_reference(target):
            return code(target)
    return None


def in_failed_exit(rule: Rule, node: cst.CSTNode) -> bool:
    """In the body of an ``if`` of a context manager's ``__exit__`` that tests its exception
    (``if type is not None:``): it runs where this rank's own ``with`` block raised."""
    child: cst.CSTNode = node
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return False
        if isinstance(ancestor, cst.If) and child is ancestor.body:
            function = next((a for a in rule.ancestors(ancestor) if isinstance(a, cst.FunctionDef)), None)
            if function is not None and function.name.value == "__exit__" and len(function.params.params) >= 2:
                raised = function.params.params[1].name.value
                if any(n.value == raised for n in of_types(ancestor.test, cst.Name)):
                    return True
        child = ancestor
    return False
