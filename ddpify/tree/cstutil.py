"""Fast read-only traversals of a libcst tree.

libcst's own traversals (``matchers.findall``, ``CSTVisitor``, batched visitors, the
``ParentNodeProvider``) rebuild every node they pass (each ``_visit_and_replace_children``
calls the node's constructor and its validation), even when nothing changes. A read-only
question needs none of that. Here a tree is flattened once, in libcst's exact visit order, by
reading the dataclass fields directly; the flat form answers type queries (``of_types``: the
nodes of given classes, in order), the parent of every node, and drives visitors -- plain
``CSTVisitor``s and batches of ``BatchableCSTVisitor``s -- with the same calls, in the same
order, as libcst would make (tested against libcst on real code), at a fraction of the cost.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

import libcst as cst

from ddpify.tree.visit_order import VISITED as _VISITED

N = TypeVar("N", bound=cst.CSTNode)

# Visited only when not None (``... if format_spec is not None else None``).
_VISITED_IF_SET = frozenset({("FormattedStringExpression", "format_spec"), ("TemplatedStringExpression", "format_spec")})


def _field_names(node: cst.CSTNode) -> tuple[str, ...]:
    visited = _VISITED.get(type(node).__name__)
    if visited is None:
        return tuple(f.name for f in dataclasses.fields(node))
    return visited


_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = _field_names(node)
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


class Flat:
    """A tree in pre-order (libcst's visit order): ``nodes[i + 1:ends[i]]`` are the
    descendants of ``nodes[i]``; ``parents`` maps every node but the root to its parent."""

    __slots__ = ("nodes", "ends", "parents", "_at", "_by_type")

    def __init__(self, root: cst.CSTNode) -> None:
        nodes: list[cst.CSTNode] = []
        ends: list[int] = []
        parents: dict[cst.CSTNode, cst.CSTNode] = {}
        stack: list[tuple[cst.CSTNode, int]] = [(root, -1)]  # (node, -1) enters, (node, i) closes i
        while stack:
            node, opened = stack.pop()
            if opened >= 0:
                ends[opened] = len(nodes)
                continue
            index = len(nodes)
            nodes.append(node)
            ends.append(0)
            stack.append((node, index))
            children = _children(node)
            for child in children:
                parents[child] = node
            stack.extend((child, -1) for child in reversed(children))
        self.nodes = nodes
        self.ends = ends
        self.parents = parents
        self._at = {id(node): i for i, node in enumerate(nodes)}
        self._by_type: dict[str, list[int]] | None = None

    def position(self, node: cst.CSTNode) -> int | None:
        i = self._at.get(id(node))
        return i if i is not None and self.nodes[i] is node else None

    def of_types(self, names: Iterable[str], start: int, end: int) -> list[cst.CSTNode]:
        """Nodes whose class is named in ``names`` among ``nodes[start:end]``, in order."""
        if self._by_type is None:
            by_type: dict[str, list[int]] = {}
            for i, node in enumerate(self.nodes):
                by_type.setdefault(type(node).__name__, []).append(i)
            self._by_type = by_type
        hits: list[int] = []
        for name in set(names):
            positions = self._by_type.get(name, [])
            hits.extend(positions[bisect.bisect_left(positions, start) : bisect.bisect_left(positions, end)])
        hits.sort()
        return [self.nodes[i] for i in hits]


_FLAT: OrderedDict[int, Flat] = OrderedDict()
_FLAT_ROOTS = 8


def flatten(tree: cst.CSTNode) -> tuple[Flat, int]:
    """The flat form holding ``tree`` and the position of ``tree`` in it: a subtree of a tree
    flattened before is found there; anything else is flattened now (a few trees are kept)."""
    for key in reversed(_FLAT):
        flat = _FLAT[key]
        i = flat.position(tree)
        if i is not None:
            return flat, i
    flat = Flat(tree)
    _FLAT[id(tree)] = flat
    if len(_FLAT) > _FLAT_ROOTS:
        _FLAT.popitem(last=False)
    return flat, 0


def descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node`` and every node below it, in libcst's visit order."""
    flat, i = flatten(node)
    return flat.nodes[i : flat.ends[i]]


def parents(tree: cst.CSTNode) -> Mapping[cst.CSTNode, cst.CSTNode]:
    """Every node of ``tree`` (but ``tree``) -> its parent: ``ParentNodeProvider``'s answer."""
    flat, i = flatten(tree)
    if i == 0:
        return flat.parents
    return {node: flat.parents[node] for node in flat.nodes[i + 1 : flat.ends[i]]}


@overload
def of_types(tree: cst.CSTNode, kind: type[N], /) -> list[N]: ...
@overload
def of_types(tree: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]: ...
def of_types(tree: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[Any]:
    """Every node of one of these classes in ``tree`` (``tree`` included), in visit order
    (typed as that class when there is one)."""
    flat, i = flatten(tree)
    return flat.of_types([kind.__name__ for kind in kinds], i, flat.ends[i])


# ---------------------------------------------------------------- node predicates
# Plain tests for the shapes the check rules ask about, so that the check path never imports
# libcst.matchers (~0.25 s of a cold start).
def is_name(node: cst.CSTNode | None, *values: str) -> bool:
    """A bare name, one of ``values`` when any are given (``None`` for ``is_name(x, "None")``)."""
    return isinstance(node, cst.Name) and (not values or node.value in values)


def attribute_name(node: cst.CSTNode) -> str | None:
    """``x.y.name`` -> ``"name"``; None for anything but an attribute (``call.func`` of a method
    call gives the method's name)."""
    return node.attr.value if isinstance(node, cst.Attribute) else None


def is_method_call(node: cst.CSTNode, *names: str) -> bool:
    """A call of an attribute, ``x.<name>(...)`` with ``name`` in ``names`` when any are given."""
    if not isinstance(node, cst.Call):
        return False
    name = attribute_name(node.func)
    return name is not None and (not names or name in names)


def single_statement(line: cst.CSTNode, *kinds: type) -> bool:
    """A simple statement line holding exactly one statement of these classes."""
    return isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], kinds)


def has_binary_operator(tree: cst.CSTNode, *operators: type) -> bool:
    """Whether ``tree`` holds a binary operation by one of these operators (``cst.Modulo``: ``%``)."""
    return any(isinstance(node.operator, operators) for node in of_types(tree, cst.BinaryOperation))


def callee_name(call: cst.Call) -> str | None:
    """The called function's own name: ``save`` for ``save(...)`` and ``utils.save(...)``."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    return func.attr.value if isinstance(func, cst.Attribute) else None


def keyword_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value given as ``name=`` in ``call``, or None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def ancestors(node: cst.CSTNode, parent: Callable[[cst.CSTNode], cst.CSTNode | None]) -> Iterator[cst.CSTNode]:
    """``node``'s parent, its parent's parent, ... up to the root, as ``parent`` looks them up
    (a visitor's ``ParentNodeProvider`` metadata, the converter's recording)."""
    current = parent(node)
    while current is not None:
        yield current
        current = parent(current)


# ---------------------------------------------------------------- visitors
_ATTRIBUTE_HOOK = re.compile(r"^(visit|leave)_[A-Z][A-Za-z]*_[a-z]")


def has_attribute_hooks(names: Iterable[str]) -> bool:
    """Whether any of these method names is an attribute hook (``visit_Call_func``), which
    the fast drivers do not call (the engine then falls back to libcst's traversal)."""
    return any(_ATTRIBUTE_HOOK.match(name) for name in names)


def _plain_hooks(visitor: cst.CSTVisitor) -> tuple[Callable[[cst.CSTNode], bool], Callable[[cst.CSTNode], None]]:
    """The visitor's ``on_visit`` / ``on_leave``; for a matcher-decoratable visitor that uses no
    matcher decorators, ``CSTVisitor``'s own, which then do the same thing (the matcher
    bookkeeping has nothing to track) at a fraction of the cost. No visitor can be one unless
    ``libcst.matchers`` was imported, which this module does not do on its own."""
    matchers = sys.modules.get("libcst.matchers")
    if matchers is not None and isinstance(visitor, matchers.MatcherDecoratableVisitor):
        try:
            plain = not visitor._matchers and not visitor._extra_visit_funcs and not visitor._extra_leave_funcs
        except AttributeError:  # another libcst: keep its own behaviour
            plain = False
        if plain:
            return (lambda node: cst.CSTVisitor.on_visit(visitor, node)), (lambda node: cst.CSTVisitor.on_leave(visitor, node))
    return visitor.on_visit, visitor.on_leave


def walk(tree: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``tree.visit(visitor)`` for a read-only visitor without attribute hooks: the same
    ``on_visit`` / ``on_leave`` calls in the same order (children skipped where ``on_visit``
    says so), without rebuilding any node. Metadata must be resolved by the caller."""
    flat, start = flatten(tree)
    nodes, ends = flat.nodes, flat.ends
    on_visit, on_leave = _plain_hooks(visitor)
    open_: list[int] = []
    i, stop = start, ends[start]
    while i < stop:
        while open_ and ends[open_[-1]] <= i:
            on_leave(nodes[open_.pop()])
        open_.append(i)
        i = i + 1 if on_visit(nodes[i]) else ends[i]
    while open_:
        on_leave(nodes[open_.pop()])


VisitorMethod = Callable[[cst.CSTNode], None]


def visit_batched(tree: cst.CSTNode, methods: Mapping[str, Sequence[VisitorMethod]]) -> None:
    """``libcst.visit_batched`` for visitors without attribute hooks, given their methods by
    name (``{"visit_Call": [...], "leave_Module": [...]}``, each list in visitor order)."""
    flat, start = flatten(tree)
    nodes, ends = flat.nodes, flat.ends
    visits: dict[type, Sequence[VisitorMethod]] = {}
    leaves: dict[type, Sequence[VisitorMethod]] = {}
    open_: list[int] = []
    for i in range(start, ends[start]):
        while open_ and ends[open_[-1]] <= i:
            closing = nodes[open_.pop()]
            for leave in leaves[type(closing)]:
                leave(closing)
        node = nodes[i]
        kind = type(node)
        todo = visits.get(kind)
        if todo is None:
            todo = visits[kind] = methods.get(f"visit_{kind.__name__}", ())
            leaves[kind] = methods.get(f"leave_{kind.__name__}", ())
        for visit in todo:
            visit(node)
        if leaves[kind]:
            open_.append(i)
    while open_:
        closing = nodes[open_.pop()]
        for leave in leaves[type(closing)]:
            leave(closing)


# ---------------------------------------------------------------- libcst's own traversals
_LIBCST_VISIT = cst.CSTNode.visit
_FIELDS_OF_CLASS: dict[type, tuple[str, ...] | None] = {}
_VISITOR_CLASSES: dict[type, tuple[bool, bool, bool]] = {}  # class -> (read-only, batched, hooks)
_BATCHED_HOOKS: dict[int, tuple[object, bool]] = {}
_patch_depth = 0
_SEQUENCES = (list, tuple)


def _visitor_kind(visitor: object) -> tuple[bool, bool]:
    """(a read-only ``CSTVisitor``?, can ``on_visit_attribute``/``on_leave_attribute`` do
    anything on it?), found once per visitor class (per instance for libcst's batch of
    metadata providers, whose attribute hooks depend on the providers in it)."""
    kind = type(visitor)
    known = _VISITOR_CLASSES.get(kind)
    if known is None:
        batched = kind.__name__ == "_BatchedCSTVisitor" and kind.__module__.startswith("libcst")
        plain = (
            getattr(kind, "on_visit_attribute", None) is cst.CSTVisitor.on_visit_attribute
            and getattr(kind, "on_leave_attribute", None) is cst.CSTVisitor.on_leave_attribute
            and not has_attribute_hooks(dir(kind))
        )
        known = _VISITOR_CLASSES[kind] = (isinstance(visitor, cst.CSTVisitor), batched, not plain)
    read_only, batched, hooks = known
    if batched:
        cached = _BATCHED_HOOKS.get(id(visitor))
        if cached is None or cached[0] is not visitor:
            methods = getattr(visitor, "visitor_methods", None)
            if len(_BATCHED_HOOKS) > 64:
                _BATCHED_HOOKS.clear()
            cached = _BATCHED_HOOKS[id(visitor)] = (visitor, methods is None or has_attribute_hooks(methods))
        hooks = cached[1]
    return read_only, hooks


def _read_only_visit(self: cst.CSTNode, visitor):
    """``CSTNode.visit`` for read-only visitors: the same calls in the same order (``on_visit``,
    per visited field ``on_visit_attribute`` / children / ``on_leave_attribute``, ``on_leave``)
    without rebuilding the node from its visited children. Transformers get libcst's own.
    Attribute hooks are skipped only for visitors on which they do nothing."""
    read_only, hooks = _visitor_kind(visitor)
    if not read_only:
        return _LIBCST_VISIT(self, visitor)
    kind = type(self)
    fields = _FIELDS_OF_CLASS.get(kind, ())
    if fields == ():
        fields = _FIELDS_OF_CLASS[kind] = _VISITED.get(kind.__name__)
    if fields is None:
        return _LIBCST_VISIT(self, visitor)
    if visitor.on_visit(self):
        for name in fields:
            value = getattr(self, name)
            if value is None:
                if (kind.__name__, name) in _VISITED_IF_SET:
                    continue
                if hooks:
                    visitor.on_visit_attribute(self, name)
                    visitor.on_leave_attribute(self, name)
                continue
            if hooks:
                visitor.on_visit_attribute(self, name)
            if type(value) in _SEQUENCES:
                for item in value:
                    item.visit(visitor)
            elif value is not cst.MaybeSentinel.DEFAULT:
                value.visit(visitor)
            if hooks:
                visitor.on_leave_attribute(self, name)
    visitor.on_leave(self)
    return self


class read_only_visits:
    """Within ``with read_only_visits():``, libcst traversals by ``CSTVisitor``s -- the scope
    and qualified-name analyses of libcst's metadata providers among them -- skip rebuilding
    every node they pass. Their results are the same (tested); transformers are untouched.
    Nestable; the original ``CSTNode.visit`` is back once the outermost block exits."""

    def __enter__(self) -> read_only_visits:
        global _patch_depth
        _patch_depth += 1
        if _patch_depth == 1:
            cst.CSTNode.visit = _read_only_visit  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        global _patch_depth
        _patch_depth -= 1
        if _patch_depth == 0:
            cst.CSTNode.visit = _LIBCST_VISIT  # type: ignore[method-assign]


_EMPTY = cst.Module([])


def code(node: cst.CSTNode) -> str:
    """Source text of ``node`` (used to compare simple expressions such as ``self.model``).
    Plain names and dotted names, most of the calls, are spelled without a code generation."""
    if isinstance(node, cst.Name) and not node.lpar:
        return node.value
    if isinstance(node, cst.Attribute) and _plain_dot(node):
        return f"{code(node.value)}.{node.attr.value}"
    return _EMPTY.code_for_node(node)


def _plain_dot(node: cst.Attribute) -> bool:
    dot = node.dot
    return (
        not node.lpar
        and isinstance(node.value, (cst.Name, cst.Attribute))
        and isinstance(dot.whitespace_before, cst.SimpleWhitespace)
        and isinstance(dot.whitespace_after, cst.SimpleWhitespace)
        and not dot.whitespace_before.value
        and not dot.whitespace_after.value
    )


def is_simple_reference(node: cst.CSTNode) -> bool:
    """``model``, ``self.model``, ``trainer.net``: names we can refer to again in new code."""
    if isinstance(node, cst.Name):
        return True
    return isinstance(node, cst.Attribute) and is_simple_reference(node.value)


def leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    """The blank and comment lines above a statement (every concrete statement has them;
    ``BaseStatement`` does not declare them)."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return statement.leading_lines


def accepts(function: cst.FunctionDef, call: cst.Call, *, bound: bool) -> bool:
    """Whether ``call``'s arguments can bind to ``function``'s parameters (``bound``: called
    as a method, ``self`` given by the receiver). A call with ``*args`` / ``**kwargs`` may bind
    to anything; ``self.model.train()`` cannot be ``Trainer.train(self, args)``."""
    if any(a.star for a in call.args):
        return True
    params = function.params
    positional = [*params.posonly_params, *params.params][1 if bound else 0 :]
    passed = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if len(passed) > len(positional) and not isinstance(params.star_arg, cst.Param):
        return False
    by_name = {p.name.value for p in [*params.params, *params.kwonly_params]} - {p.name.value for p in params.posonly_params}
    if keywords - by_name and params.star_kwarg is None:
        return False
    unfilled = [p for p in positional[len(passed) :] if p.default is None] + [p for p in params.kwonly_params if p.default is None]
    return all(p.name.value in keywords for p in unfilled)


def loop_reads_keys(loop: cst.For | cst.CompFor, scope: cst.CSTNode) -> bool:
    """``for name in nets: ... nets[name]``: the loop variable indexes the container it runs
    over, so it holds the keys (a dict's), not the elements. ``scope``: where the loop's
    variable is used (the loop's body; a comprehension for a ``CompFor``)."""
    if not isinstance(loop.target, cst.Name) or not is_simple_reference(loop.iter):
        return False
    container, key = code(loop.iter), loop.target.value
    return any(
        code(s.value) == container
        and len(s.slice) == 1
        and isinstance(s.slice[0].slice, cst.Index)
        and is_name(s.slice[0].slice.value, key)
        for s in of_types(scope, cst.Subscript)
    )


def parameter_names(params: cst.Parameters) -> set[str]:
    """Every name a function's parameters bind, ``*args`` and ``**kwargs`` included."""
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {p.name.value for p in found}
