"""Names each pass of a ``for`` loop binds afresh: the loop's own items, and the names a
statement of its body assigns (at its top level, or in a ``with`` block there) before anything
in the body reads them (``output = decoder(data)``, ``loss = criterion(output, target)``).

Two loops of one function often reuse such names: NRI's training and validation loops both
compute ``output``, ``target`` and ``loss_nll``, and refine their items in place (``data =
data.cuda()``). Read inside its loop, such a name holds what that loop computed, not what the
other loop did; ``ddpify.analysis.divergence`` keys it by the loop, and lets what the loop
leaves in it flow on to the code after the loop (``loop_exits``)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.reads import targets
from ddpify.tree.cstutil import code, of_types

if TYPE_CHECKING:
    from ddpify.analysis.source import Source

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def local_loop(source: Source, node: cst.CSTNode, name: str | None = None) -> cst.For | None:
    """The innermost ``for`` loop whose body holds ``node`` (not through a nested function) and
    whose passes bind ``name`` (default: ``node``'s root name) afresh; None where there is none."""
    root = name if name is not None else code(node).split(".", 1)[0]
    child = node
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, _SCOPES):
            return None
        if isinstance(ancestor, cst.For) and child is ancestor.body and root in fresh_names(source, ancestor):
            return ancestor
        child = ancestor
    return None


@functools.lru_cache(maxsize=4096)
def fresh_names(source: Source, loop: cst.For) -> frozenset[str]:
    """The plain names each pass of ``loop`` binds before its body reads them (its items first)."""
    fresh = {n for n in targets(loop.target) if "." not in n}
    read: set[str] = set()
    for statement in _in_order(loop.body):
        bound = _assigned(statement)
        value = statement.body[0].value if bound and isinstance(statement, cst.SimpleStatementLine) else statement  # type: ignore[attr-defined]
        read |= _reads(source, value)
        fresh |= {n for n in bound if n not in read}
    return frozenset(fresh)


def loop_exits(source: Source) -> Iterator[tuple[cst.For, str, cst.For | None]]:
    """``(loop, name, outer)`` for each name a loop's body binds afresh: what the last pass left
    in it is what the code after the loop reads (``outer``: the loop around, whose passes bind
    the name afresh too, or None for the function)."""
    for loop in source.of_types(cst.For):
        assert isinstance(loop, cst.For)
        items = set(targets(loop.target))
        for name in sorted(fresh_names(source, loop) - items):
            yield loop, name, local_loop(source, loop, name)


def _in_order(block: cst.BaseSuite) -> Iterator[cst.BaseStatement | cst.BaseSmallStatement]:
    """The statements a pass runs on every path, in order; a compound one (an ``if``, a loop)
    comes whole, so what it assigns counts as read-before-bound nowhere and bound nowhere."""
    for statement in block.body if isinstance(block, cst.IndentedBlock) else []:
        if isinstance(statement, cst.With):
            yield from _in_order(statement.body)
        else:
            yield statement


def _assigned(statement: cst.CSTNode) -> list[str]:
    """The plain names a one-assignment statement binds (``out = f(x)``, ``a, b = g()``)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return []
    small = statement.body[0]
    if isinstance(small, cst.Assign):
        return [n for t in small.targets for n in targets(t.target) if "." not in n]
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        return [n for n in targets(small.target) if "." not in n]
    return []


def _reads(source: Source, node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads (not attribute names, not keywords)."""
    found = set()
    for name in of_types(node, cst.Name):
        assert isinstance(name, cst.Name)
        parent = source.parent(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name or isinstance(parent, cst.Arg) and parent.keyword is name:
            continue
        found.add(name.value)
    return found
