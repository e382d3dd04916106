"""ddpify.tree.cstutil answers exactly what libcst's own (slower) traversals answer: the same nodes in
the same order for type queries, the same parents, the same visitor calls in the same order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from ddpify.tree import cstutil

ROOT = Path(__file__).resolve().parents[2]

# Nodes whose fields libcst visits in another order than their dataclass fields list them.
TRICKY = '''\
import os, torch as T
from torch.nn import (Linear as L, ReLU)
from . import sibling

@decorate(arg=1)
@other
class Model(Base, metaclass=Meta):
    x: int = f(1)

    @property
    def forward(self, x: T.Tensor = g(2), *args, k=h(3), **kw) -> T.Tensor:
        y = [a(i) for i in b(x) if c(i)]
        z = {k(i): v(i) for i in d()}
        w = lambda q=e(): q(f"{x!r:>{width(4)}}" f"{y}")
        assert check(x), message(x)
        return x if cond(x) else other(x)

async def run():
    async with ctx(1) as a, ctx(2) as b:
        async for item in stream(a):
            await item.send(b[s(0):s(1):s(2)])
    try:
        pass
    except (E1, E2) as error:
        handle(error)
    else:
        ok()
    finally:
        done()

def matcher(v):
    match v:
        case Point(x=0, y=yy) if yy > g(1):
            return (n := len(v))
        case [first, *rest]:
            return first
        case {"k": value, **others}:
            return value
    return print(*v, sep=",", **opts)

global_value: dict[str, int] = {"a": 1, **extra}
del a[0], b.c
raise Err() from cause()
'''


def _sources() -> list[tuple[str, str]]:
    files = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))
    return [("tricky", TRICKY)] + [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in files]


SOURCES = _sources()
IDS = [name for name, _ in SOURCES]


class _Recorder(cst.CSTVisitor):
    def __init__(self, prune: tuple[type, ...] = ()) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []
        self.prune = prune

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        return not isinstance(node, self.prune)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))


@pytest.mark.parametrize("name, source", SOURCES, ids=IDS)
def test_descendants_in_libcst_visit_order(name: str, source: str) -> None:
    module = cst.parse_module(source)
    recorder = _Recorder()
    module.visit(recorder)
    assert [n for e, n in recorder.events if e == "visit"] == [id(n) for n in cstutil.descendants(module)]


KINDS = [
    (cst.Call,),
    (cst.Name,),
    (cst.Name, cst.Attribute, cst.Call),
    (cst.Import, cst.ImportFrom),
    (cst.SimpleString,),
]


def _matcher(kinds: tuple[type, ...]) -> m.BaseMatcherNode:
    matchers = [getattr(m, kind.__name__)() for kind in kinds]
    return matchers[0] if len(matchers) == 1 else m.OneOf(*matchers)


@pytest.mark.parametrize("name, source", SOURCES, ids=IDS)
def test_of_types_is_matchers_findall(name: str, source: str) -> None:
    module = cst.parse_module(source)
    for kinds in KINDS:
        assert cstutil.of_types(module, *kinds) == m.findall(module, _matcher(kinds)), kinds
    for statement in module.body:  # subtrees of a flattened tree
        for kinds in KINDS[:3]:
            assert cstutil.of_types(statement, *kinds) == m.findall(statement, _matcher(kinds))


# Each plain predicate of cstutil beside the matcher it replaces in the check rules.
NODE_PREDICATES = [
    (lambda n: cstutil.is_name(n), m.Name()),
    (lambda n: cstutil.is_name(n, "None"), m.Name("None")),
    (lambda n: cstutil.is_name(n, "self", "cls"), m.Name("self") | m.Name("cls")),
    (lambda n: cstutil.is_method_call(n), m.Call(func=m.Attribute())),
    (lambda n: cstutil.is_method_call(n, "state_dict"), m.Call(func=m.Attribute(attr=m.Name("state_dict")))),
    (lambda n: cstutil.is_method_call(n, "step", "backward"), m.Call(func=m.Attribute(attr=m.Name("step") | m.Name("backward")))),
    (lambda n: cstutil.single_statement(n, cst.Import, cst.ImportFrom), m.SimpleStatementLine(body=[m.Import() | m.ImportFrom()])),
]
SUBTREE_PREDICATES = [  # whether a subtree holds a match
    (lambda n: cstutil.has_binary_operator(n, cst.Modulo), m.BinaryOperation(operator=m.Modulo())),
    (lambda n: cstutil.has_binary_operator(n, cst.FloorDivide, cst.Divide), m.BinaryOperation(operator=m.FloorDivide() | m.Divide())),
]


@pytest.mark.parametrize("name, source", SOURCES, ids=IDS)
def test_predicates_are_their_matchers(name: str, source: str) -> None:
    module = cst.parse_module(source)
    for index, (predicate, matcher) in enumerate(NODE_PREDICATES):
        assert [n for n in cstutil.descendants(module) if predicate(n)] == m.findall(module, matcher), index
    for index, (predicate, matcher) in enumerate(SUBTREE_PREDICATES):
        for statement in cstutil.of_types(module, cst.SimpleStatementLine, cst.If, cst.For):
            assert predicate(statement) == bool(m.findall(statement, matcher)), index


@pytest.mark.parametrize("name, source", SOURCES, ids=IDS)
def test_parents_are_parent_node_provider(name: str, source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
    got = cstutil.parents(module)
    assert len(got) == len(expected)
    assert all(got[node] is parent for node, parent in expected.items())


def test_ancestors_callee_name_and_keyword_value() -> None:
    module = cst.parse_module("def f():\n    return utils.g(1, x=2)\n")
    call = cstutil.of_types(module, cst.Call)[0]
    chain = cstutil.ancestors(call, cstutil.parents(module).get)
    assert [type(n).__name__ for n in chain] == ["Return", "SimpleStatementLine", "IndentedBlock", "FunctionDef", "Module"]
    assert cstutil.callee_name(call) == "g"
    assert cstutil.code(cstutil.keyword_value(call, "x")) == "2"
    assert cstutil.keyword_value(call, "y") is None


@pytest.mark.parametrize("prune", [(), (cst.FunctionDef,), (cst.Call, cst.ClassDef)])
@pytest.mark.parametrize("name, source", SOURCES[:6], ids=IDS[:6])
def test_walk_makes_libcsts_calls(name: str, source: str, prune: tuple[type, ...]) -> None:
    module = cst.parse_module(source)
    expected, got = _Recorder(prune), _Recorder(prune)
    module.visit(expected)
    cstutil.walk(module, got)
    assert got.events == expected.events


class _Batched(cst.BatchableCSTVisitor):
    def __init__(self, tag: str, log: list) -> None:  # type: ignore[type-arg]
        super().__init__()
        self.tag, self.log = tag, log

    def visit_Call(self, node: cst.Call) -> None:
        self.log.append((self.tag, "visit_Call", id(node)))

    def leave_Call(self, original_node: cst.Call) -> None:
        self.log.append((self.tag, "leave_Call", id(original_node)))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.log.append((self.tag, "visit_FunctionDef", id(node)))

    def leave_Module(self, original_node: cst.Module) -> None:
        self.log.append((self.tag, "leave_Module", id(original_node)))


@pytest.mark.parametrize("name, source", SOURCES[:6], ids=IDS[:6])
def test_visit_batched_makes_libcsts_calls(name: str, source: str) -> None:
    module = cst.parse_module(source)
    expected: list = []  # type: ignore[type-arg]
    cst.visit_batched(module, [_Batched("a", expected), _Batched("b", expected)])
    got: list = []  # type: ignore[type-arg]
    methods: dict = {}  # type: ignore[type-arg]
    for visitor in (_Batched("a", got), _Batched("b", got)):
        for method_name, method in visitor.get_visitors().items():
            methods.setdefault(method_name, []).append(method)
    cstutil.visit_batched(module, methods)
    assert got == expected


def test_attribute_hooks_are_recognised() -> None:
    assert cstutil.has_attribute_hooks(["visit_Call_func"])
    assert cstutil.has_attribute_hooks(["leave_FunctionDef_body"])
    assert not cstutil.has_attribute_hooks(["visit_Call", "leave_Module", "visit_ImportFrom"])


class _FullRecorder(cst.CSTVisitor):
    """Every call libcst makes on a visitor, attribute hooks included."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int, str]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node), ""))
        return not isinstance(node, cst.Lambda)  # prune somewhere, as ScopeVisitor does

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node), ""))

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("visit_attribute", id(node), attribute))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("leave_attribute", id(original_node), attribute))


@pytest.mark.parametrize("name, source", SOURCES, ids=IDS)
def test_read_only_visits_make_libcsts_calls(name: str, source: str) -> None:
    module = cst.parse_module(source)
    expected, got = _FullRecorder(), _FullRecorder()
    module.visit(expected)
    with cstutil.read_only_visits():
        assert module.visit(got) is module
    assert got.events == expected.events
    assert cst.CSTNode.visit is cstutil._LIBCST_VISIT


@pytest.mark.parametrize("name, source", SOURCES, ids=IDS)
def test_metadata_is_the_same_with_read_only_visits(name: str, source: str) -> None:
    from libcst.metadata import ExpressionContextProvider, QualifiedNameProvider

    module = cst.parse_module(source)
    providers = [QualifiedNameProvider, ExpressionContextProvider]
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve_many(providers)
    with cstutil.read_only_visits(), cstutil.read_only_visits():  # nested: restored once, at the end
        got = MetadataWrapper(module, unsafe_skip_copy=True).resolve_many(providers)
    assert cst.CSTNode.visit is cstutil._LIBCST_VISIT

    def value(v):  # type: ignore[no-untyped-def]
        return v() if callable(v) else v

    for provider in providers:
        assert set(got[provider]) == set(expected[provider])
        assert all(value(got[provider][n]) == value(expected[provider][n]) for n in expected[provider])


def test_transformers_keep_libcsts_traversal() -> None:
    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            return updated_node.with_changes(value=updated_node.value.upper())

    module = cst.parse_module("a = b(c)\n")
    with cstutil.read_only_visits():
        assert module.visit(Rename()).code == "A = B(C)\n"


class _Plain(m.MatcherDecoratableVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.seen.append("call " + cst.Module([]).code_for_node(node.func))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.seen.append("def " + original_node.name.value)


class _Decorated(_Plain):
    @m.call_if_inside(m.FunctionDef(name=m.Name("forward")))
    def visit_Name(self, node: cst.Name) -> None:
        self.seen.append("name " + node.value)


@pytest.mark.parametrize("kind", [_Plain, _Decorated])
def test_walk_matcher_visitors_as_libcst_does(kind: type) -> None:
    module = cst.parse_module(TRICKY)
    expected, got = kind(), kind()
    module.visit(expected)
    cstutil.walk(module, got)
    assert got.seen == expected.seen and expected.seen


@pytest.mark.parametrize(
    ("definition", "call", "bound", "expected"),
    [
        ("def train(self, args, logger=None): ...", "self.model.train()", True, False),  # nn.Module.train()
        ("def train(self, args, logger=None): ...", "m.train(args)", True, True),
        ("def train(self, args, logger=None): ...", "m.train(args, logger=log)", True, True),
        ("def train(self, args, logger=None): ...", "m.train(args=a)", True, True),
        ("def train(self, args, logger=None): ...", "m.train(a, b, c)", True, False),
        ("def train(self, args, logger=None): ...", "m.train(a, verbose=True)", True, False),
        ("def train(self, *args): ...", "m.train(a, b, c)", True, True),
        ("def train(self, **kw): ...", "m.train(verbose=True)", True, True),
        ("def train(self, mode=True): ...", "m.train()", True, True),
        ("def save(self, *, path): ...", "m.save()", True, False),
        ("def save(self, *, path): ...", "m.save(path=p)", True, True),
        ("def f(a, /, b): ...", "f(1, b=2)", False, True),
        ("def f(a, /, b): ...", "f(a=1, b=2)", False, False),
        ("def f(a): ...", "f(*xs)", False, True),
        ("def f(a): ...", "f(**kw)", False, True),
        ("def scale(x, factor): ...", "m.scale(x, 2)", False, True),  # a staticmethod: nothing bound
    ],
)
def test_accepts_tells_whether_a_call_can_bind(definition: str, call: str, bound: bool, expected: bool) -> None:
    function = cst.parse_statement(definition)
    node = cst.parse_expression(call)
    assert isinstance(function, cst.FunctionDef) and isinstance(node, cst.Call)
    assert cstutil.accepts(function, node, bound=bound) is expected
