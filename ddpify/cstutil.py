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
from typing import Callable, Iterable, Mapping, Optional, Sequence

import libcst as cst

# The fields libcst's own traversal visits on each node class, in its order (each class's
# ``_visit_and_replace_children``; string fields such as ``Name.value`` are not visited).
# Generated from libcst 1.9 by reading those methods; tested against libcst's traversal, so
# ``descendants`` lists nodes in libcst's order and the fast visitors make exactly libcst's
# calls. A class missing here (a newer libcst) falls back to its
# dataclass fields for flattening and to libcst's own traversal for visitors.
_VISITED: dict[str, tuple[str, ...]] = {
    'Add': ('whitespace_before', 'whitespace_after'),
    'AddAssign': ('whitespace_before', 'whitespace_after'),
    'And': ('whitespace_before', 'whitespace_after'),
    'AnnAssign': ('target', 'annotation', 'equal', 'value', 'semicolon'),
    'Annotation': ('whitespace_before_indicator', 'whitespace_after_indicator', 'annotation'),
    'Arg': ('whitespace_after_star', 'keyword', 'equal', 'value', 'comma', 'whitespace_after_arg'),
    'AsName': ('whitespace_before_as', 'name', 'whitespace_after_as'),
    'Assert': ('whitespace_after_assert', 'test', 'comma', 'msg', 'semicolon'),
    'Assign': ('targets', 'value', 'semicolon'),
    'AssignEqual': ('whitespace_before', 'whitespace_after'),
    'AssignTarget': ('target', 'whitespace_before_equal', 'whitespace_after_equal'),
    'Asynchronous': ('whitespace_after',),
    'Attribute': ('lpar', 'value', 'dot', 'attr', 'rpar'),
    'AugAssign': ('target', 'operator', 'value', 'semicolon'),
    'Await': ('lpar', 'whitespace_after_await', 'expression', 'rpar'),
    'BinaryOperation': ('lpar', 'left', 'operator', 'right', 'rpar'),
    'BitAnd': ('whitespace_before', 'whitespace_after'),
    'BitAndAssign': ('whitespace_before', 'whitespace_after'),
    'BitInvert': ('whitespace_after',),
    'BitOr': ('whitespace_before', 'whitespace_after'),
    'BitOrAssign': ('whitespace_before', 'whitespace_after'),
    'BitXor': ('whitespace_before', 'whitespace_after'),
    'BitXorAssign': ('whitespace_before', 'whitespace_after'),
    'BooleanOperation': ('lpar', 'left', 'operator', 'right', 'rpar'),
    'Break': ('semicolon',),
    'Call': ('lpar', 'func', 'whitespace_after_func', 'whitespace_before_args', 'args', 'rpar'),
    'ClassDef': ('leading_lines', 'decorators', 'lines_after_decorators', 'whitespace_after_class', 'name', 'whitespace_after_name', 'type_parameters', 'whitespace_after_type_parameters', 'lpar', 'bases', 'keywords', 'rpar', 'whitespace_before_colon', 'body'),
    'Colon': ('whitespace_before', 'whitespace_after'),
    'Comma': ('whitespace_before', 'whitespace_after'),
    'Comment': (),
    'CompFor': ('whitespace_before', 'asynchronous', 'whitespace_after_for', 'target', 'whitespace_before_in', 'whitespace_after_in', 'iter', 'ifs', 'inner_for_in'),
    'CompIf': ('whitespace_before', 'whitespace_before_test', 'test'),
    'Comparison': ('lpar', 'left', 'comparisons', 'rpar'),
    'ComparisonTarget': ('operator', 'comparator'),
    'ConcatenatedString': ('lpar', 'left', 'whitespace_between', 'right', 'rpar'),
    'Continue': ('semicolon',),
    'Decorator': ('leading_lines', 'whitespace_after_at', 'decorator', 'trailing_whitespace'),
    'Del': ('target', 'whitespace_after_del', 'semicolon'),
    'Dict': ('lpar', 'lbrace', 'elements', 'rbrace', 'rpar'),
    'DictComp': ('lpar', 'lbrace', 'key', 'whitespace_before_colon', 'whitespace_after_colon', 'value', 'for_in', 'rbrace', 'rpar'),
    'DictElement': ('key', 'whitespace_before_colon', 'whitespace_after_colon', 'value', 'comma'),
    'Divide': ('whitespace_before', 'whitespace_after'),
    'DivideAssign': ('whitespace_before', 'whitespace_after'),
    'Dot': ('whitespace_before', 'whitespace_after'),
    'Element': ('value', 'comma'),
    'Ellipsis': ('lpar', 'rpar'),
    'Else': ('leading_lines', 'whitespace_before_colon', 'body'),
    'EmptyLine': ('whitespace', 'comment', 'newline'),
    'Equal': ('whitespace_before', 'whitespace_after'),
    'ExceptHandler': ('leading_lines', 'whitespace_after_except', 'type', 'name', 'whitespace_before_colon', 'body'),
    'ExceptStarHandler': ('leading_lines', 'whitespace_after_except', 'whitespace_after_star', 'type', 'name', 'whitespace_before_colon', 'body'),
    'Expr': ('value', 'semicolon'),
    'Finally': ('leading_lines', 'whitespace_before_colon', 'body'),
    'Float': ('lpar', 'rpar'),
    'FloorDivide': ('whitespace_before', 'whitespace_after'),
    'FloorDivideAssign': ('whitespace_before', 'whitespace_after'),
    'For': ('leading_lines', 'asynchronous', 'whitespace_after_for', 'target', 'whitespace_before_in', 'whitespace_after_in', 'iter', 'whitespace_before_colon', 'body', 'orelse'),
    'FormattedString': ('lpar', 'parts', 'rpar'),
    'FormattedStringExpression': ('whitespace_before_expression', 'expression', 'equal', 'whitespace_after_expression', 'format_spec'),
    'FormattedStringText': (),
    'From': ('whitespace_before_from', 'whitespace_after_from', 'item'),
    'FunctionDef': ('leading_lines', 'decorators', 'lines_after_decorators', 'asynchronous', 'whitespace_after_def', 'name', 'whitespace_after_name', 'type_parameters', 'whitespace_after_type_parameters', 'whitespace_before_params', 'params', 'returns', 'whitespace_before_colon', 'body'),
    'GeneratorExp': ('lpar', 'elt', 'for_in', 'rpar'),
    'Global': ('whitespace_after_global', 'names', 'semicolon'),
    'GreaterThan': ('whitespace_before', 'whitespace_after'),
    'GreaterThanEqual': ('whitespace_before', 'whitespace_after'),
    'If': ('leading_lines', 'whitespace_before_test', 'test', 'whitespace_after_test', 'body', 'orelse'),
    'IfExp': ('lpar', 'body', 'whitespace_before_if', 'whitespace_after_if', 'test', 'whitespace_before_else', 'whitespace_after_else', 'orelse', 'rpar'),
    'Imaginary': ('lpar', 'rpar'),
    'Import': ('whitespace_after_import', 'names', 'semicolon'),
    'ImportAlias': ('name', 'asname', 'comma'),
    'ImportFrom': ('whitespace_after_from', 'relative', 'module', 'whitespace_before_import', 'whitespace_after_import', 'lpar', 'names', 'rpar', 'semicolon'),
    'ImportStar': (),
    'In': ('whitespace_before', 'whitespace_after'),
    'IndentedBlock': ('header', 'body', 'footer'),
    'Index': ('whitespace_after_star', 'value'),
    'Integer': ('lpar', 'rpar'),
    'Is': ('whitespace_before', 'whitespace_after'),
    'IsNot': ('whitespace_before', 'whitespace_between', 'whitespace_after'),
    'Lambda': ('lpar', 'whitespace_after_lambda', 'params', 'colon', 'body', 'rpar'),
    'LazyImport': ('whitespace_after_lazy', 'whitespace_after_import', 'names', 'semicolon'),
    'LazyImportFrom': ('whitespace_after_lazy', 'whitespace_after_from', 'relative', 'module', 'whitespace_before_import', 'whitespace_after_import', 'lpar', 'names', 'rpar', 'semicolon'),
    'LeftCurlyBrace': ('whitespace_after',),
    'LeftParen': ('whitespace_after',),
    'LeftShift': ('whitespace_before', 'whitespace_after'),
    'LeftShiftAssign': ('whitespace_before', 'whitespace_after'),
    'LeftSquareBracket': ('whitespace_after',),
    'LessThan': ('whitespace_before', 'whitespace_after'),
    'LessThanEqual': ('whitespace_before', 'whitespace_after'),
    'List': ('lpar', 'lbracket', 'elements', 'rbracket', 'rpar'),
    'ListComp': ('lpar', 'lbracket', 'elt', 'for_in', 'rbracket', 'rpar'),
    'Match': ('leading_lines', 'whitespace_after_match', 'subject', 'whitespace_before_colon', 'whitespace_after_colon', 'cases', 'footer'),
    'MatchAs': ('lpar', 'pattern', 'whitespace_before_as', 'whitespace_after_as', 'name', 'rpar'),
    'MatchCase': ('leading_lines', 'whitespace_after_case', 'pattern', 'whitespace_before_if', 'whitespace_after_if', 'guard', 'whitespace_before_colon', 'body'),
    'MatchClass': ('lpar', 'cls', 'whitespace_after_cls', 'whitespace_before_patterns', 'patterns', 'kwds', 'whitespace_after_kwds', 'rpar'),
    'MatchKeywordElement': ('key', 'whitespace_before_equal', 'whitespace_after_equal', 'pattern', 'comma'),
    'MatchList': ('lpar', 'lbracket', 'patterns', 'rbracket', 'rpar'),
    'MatchMapping': ('lpar', 'lbrace', 'elements', 'whitespace_before_rest', 'rest', 'trailing_comma', 'rbrace', 'rpar'),
    'MatchMappingElement': ('key', 'whitespace_before_colon', 'whitespace_after_colon', 'pattern', 'comma'),
    'MatchOr': ('lpar', 'patterns', 'rpar'),
    'MatchOrElement': ('pattern', 'separator'),
    'MatchSequenceElement': ('value', 'comma'),
    'MatchSingleton': ('value',),
    'MatchStar': ('whitespace_before_name', 'name', 'comma'),
    'MatchTuple': ('lpar', 'patterns', 'rpar'),
    'MatchValue': ('value',),
    'MatrixMultiply': ('whitespace_before', 'whitespace_after'),
    'MatrixMultiplyAssign': ('whitespace_before', 'whitespace_after'),
    'Minus': ('whitespace_after',),
    'Module': ('header', 'body', 'footer'),
    'Modulo': ('whitespace_before', 'whitespace_after'),
    'ModuloAssign': ('whitespace_before', 'whitespace_after'),
    'Multiply': ('whitespace_before', 'whitespace_after'),
    'MultiplyAssign': ('whitespace_before', 'whitespace_after'),
    'Name': ('lpar', 'rpar'),
    'NameItem': ('name', 'comma'),
    'NamedExpr': ('lpar', 'target', 'whitespace_before_walrus', 'whitespace_after_walrus', 'value', 'rpar'),
    'Newline': (),
    'Nonlocal': ('whitespace_after_nonlocal', 'names', 'semicolon'),
    'Not': ('whitespace_after',),
    'NotEqual': ('whitespace_before', 'whitespace_after'),
    'NotIn': ('whitespace_before', 'whitespace_between', 'whitespace_after'),
    'Or': ('whitespace_before', 'whitespace_after'),
    'Param': ('whitespace_after_star', 'name', 'annotation', 'equal', 'default', 'comma', 'whitespace_after_param'),
    'ParamSlash': ('comma', 'whitespace_after'),
    'ParamSpec': ('name', 'whitespace_after_star'),
    'ParamStar': ('comma',),
    'Parameters': ('posonly_params', 'posonly_ind', 'params', 'star_arg', 'kwonly_params', 'star_kwarg'),
    'ParenthesizedWhitespace': ('first_line', 'empty_lines', 'last_line'),
    'Pass': ('semicolon',),
    'Plus': ('whitespace_after',),
    'Power': ('whitespace_before', 'whitespace_after'),
    'PowerAssign': ('whitespace_before', 'whitespace_after'),
    'Raise': ('whitespace_after_raise', 'exc', 'cause', 'semicolon'),
    'Return': ('whitespace_after_return', 'value', 'semicolon'),
    'RightCurlyBrace': ('whitespace_before',),
    'RightParen': ('whitespace_before',),
    'RightShift': ('whitespace_before', 'whitespace_after'),
    'RightShiftAssign': ('whitespace_before', 'whitespace_after'),
    'RightSquareBracket': ('whitespace_before',),
    'Semicolon': ('whitespace_before', 'whitespace_after'),
    'Set': ('lpar', 'lbrace', 'elements', 'rbrace', 'rpar'),
    'SetComp': ('lpar', 'lbrace', 'elt', 'for_in', 'rbrace', 'rpar'),
    'SimpleStatementLine': ('leading_lines', 'body', 'trailing_whitespace'),
    'SimpleStatementSuite': ('leading_whitespace', 'body', 'trailing_whitespace'),
    'SimpleString': ('lpar', 'rpar'),
    'SimpleWhitespace': (),
    'Slice': ('lower', 'first_colon', 'upper', 'second_colon', 'step'),
    'StarredDictComp': ('lpar', 'lbrace', 'whitespace_before_value', 'value', 'for_in', 'rbrace', 'rpar'),
    'StarredDictElement': ('whitespace_before_value', 'value', 'comma'),
    'StarredElement': ('lpar', 'whitespace_before_value', 'value', 'rpar', 'comma'),
    'Subscript': ('lpar', 'value', 'whitespace_after_value', 'lbracket', 'slice', 'rbracket', 'rpar'),
    'SubscriptElement': ('slice', 'comma'),
    'Subtract': ('whitespace_before', 'whitespace_after'),
    'SubtractAssign': ('whitespace_before', 'whitespace_after'),
    'TemplatedString': ('lpar', 'parts', 'rpar'),
    'TemplatedStringExpression': ('whitespace_before_expression', 'expression', 'equal', 'whitespace_after_expression', 'format_spec'),
    'TemplatedStringText': (),
    'TrailingWhitespace': ('whitespace', 'comment', 'newline'),
    'Try': ('leading_lines', 'whitespace_before_colon', 'body', 'handlers', 'orelse', 'finalbody'),
    'TryStar': ('leading_lines', 'whitespace_before_colon', 'body', 'handlers', 'orelse', 'finalbody'),
    'Tuple': ('lpar', 'elements', 'rpar'),
    'TypeAlias': ('whitespace_after_type', 'name', 'whitespace_after_name', 'type_parameters', 'whitespace_after_type_parameters', 'whitespace_after_equals', 'value', 'semicolon'),
    'TypeParam': ('param', 'equal', 'whitespace_after_star', 'default', 'comma'),
    'TypeParameters': ('lbracket', 'params', 'rbracket'),
    'TypeVar': ('name', 'colon', 'bound'),
    'TypeVarTuple': ('name', 'whitespace_after_star'),
    'UnaryOperation': ('lpar', 'operator', 'expression', 'rpar'),
    'While': ('leading_lines', 'whitespace_after_while', 'test', 'whitespace_before_colon', 'body', 'orelse'),
    'With': ('leading_lines', 'asynchronous', 'whitespace_after_with', 'lpar', 'items', 'rpar', 'whitespace_before_colon', 'body'),
    'WithItem': ('item', 'asname', 'comma'),
    'Yield': ('lpar', 'whitespace_after_yield', 'value', 'rpar'),
}

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
        self._by_type: Optional[dict[str, list[int]]] = None

    def position(self, node: cst.CSTNode) -> Optional[int]:
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
            hits.extend(positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)])
        hits.sort()
        return [self.nodes[i] for i in hits]


_FLAT: "OrderedDict[int, Flat]" = OrderedDict()
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
    return flat.nodes[i:flat.ends[i]]


def parents(tree: cst.CSTNode) -> Mapping[cst.CSTNode, cst.CSTNode]:
    """Every node of ``tree`` (but ``tree``) -> its parent: ``ParentNodeProvider``'s answer."""
    flat, i = flatten(tree)
    if i == 0:
        return flat.parents
    return {node: flat.parents[node] for node in flat.nodes[i + 1:flat.ends[i]]}


def of_types(tree: cst.CSTNode, *kinds: type) -> list[cst.CSTNode]:
    """Every node of one of these classes in ``tree`` (``tree`` included), in visit order."""
    flat, i = flatten(tree)
    return flat.of_types([kind.__name__ for kind in kinds], i, flat.ends[i])


# ---------------------------------------------------------------- node predicates
# Plain tests for the shapes the check rules ask about, so that the check path never imports
# libcst.matchers (~0.25 s of a cold start).
def is_name(node: cst.CSTNode, *values: str) -> bool:
    """A bare name, one of ``values`` when any are given (``None`` for ``is_name(x, "None")``)."""
    return isinstance(node, cst.Name) and (not values or node.value in values)


def attribute_name(node: cst.CSTNode) -> Optional[str]:
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
    return any(isinstance(node.operator, operators) for node in of_types(tree, cst.BinaryOperation))  # type: ignore[attr-defined]


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
_FIELDS_OF_CLASS: dict[type, Optional[tuple[str, ...]]] = {}
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
        plain = (kind.on_visit_attribute is cst.CSTVisitor.on_visit_attribute
                 and kind.on_leave_attribute is cst.CSTVisitor.on_leave_attribute
                 and not has_attribute_hooks(dir(kind)))
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


def _read_only_visit(self: cst.CSTNode, visitor):  # type: ignore[no-untyped-def]
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

    def __enter__(self) -> "read_only_visits":
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
