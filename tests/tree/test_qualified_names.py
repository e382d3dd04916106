"""ddpify.tree.qualified_names answers what libcst's QualifiedNameProvider answers, for every node
(string annotations aside: libcst parses them, ddpify never asks about them)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from ddpify.tree import cstutil
from ddpify.tree.qualified_names import QualifiedNames

ROOT = Path(__file__).resolve().parents[2]

SCOPES = '''\
import os.path
import torch, torch.nn as nn
import torch.distributed
from torch.utils.data import DataLoader as DL, Dataset
from . import sibling
from ..pkg.mod import helper as h
from star import *

print(os.path.join, os.getcwd, torch.cuda.is_available(), nn.Linear, DL, h.x, sibling.y)
torch.distributed.barrier()
undefined_name.attribute
DataLoader = DL
DataLoader(1)

class Model(nn.Module):
    layer = nn.Linear
    other = layer

    def forward(self, x, default=layer, *args, k: nn.Module = nn.ReLU(), **kw):
        return layer, self.layer, x, default, args, k, kw

    @staticmethod
    def make(n=DL):
        return [n for n in range(n)], [torch for torch in torch.arange(3)]


def rebinding():
    value = torch.zeros(1)
    torch = value
    return torch


def reads_before_binding():
    print(len)
    len = 3
    return len


counter = 0


def uses_global():
    global counter
    counter += 1
    return counter


def outer():
    state = DL

    def inner():
        nonlocal state
        state = state(1)
        return state
    return inner, lambda q=state, *r: (q, r, state)


with open("f") as handle, torch.no_grad():
    handle.read()
for index, (left, *rest) in enumerate(torch.ones(2)):
    print(index, left, rest)
try:
    pass
except (ValueError, torch.TypeError) as error:
    print(error)
if (walrus := torch.randn(1)) is not None:
    print(walrus)
match torch.zeros(1):
    case {"k": matched, **others}:
        print(matched, others)
    case [first, *tail] if first:
        print(first, tail)
    case nn.Linear(in_features=size) as linear:
        print(size, linear)
print({key: DL for key in os.environ}, {x for x in DL if x}, (g for g in DL for h2 in g))
del counter
'''


def _sources() -> list[tuple[str, str]]:
    files = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))
    read = [(str(p.relative_to(ROOT)), p.read_bytes().decode("utf-8")) for p in files]
    return [("scopes", SCOPES), *read, ("benchmark", (ROOT / "benchmarks" / "data" / "train.py").read_text(encoding="utf-8"))]


SOURCES = _sources()


def _expected(module: cst.Module) -> dict[cst.CSTNode, set[str]]:
    resolved = MetadataWrapper(module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
    answers: dict[cst.CSTNode, set[str]] = {}
    for node, value in resolved.items():
        if callable(getattr(value, "callable", None)):  # libcst's lazy metadata values
            value = value.callable()
        answers[node] = {q.name for q in value}
    return answers


@pytest.mark.parametrize("name, source", SOURCES, ids=[name for name, _ in SOURCES])
def test_equal_to_qualified_name_provider(name: str, source: str) -> None:
    module = cst.parse_module(source)
    expected = _expected(module)
    mine = QualifiedNames(module)
    differences = [
        (type(node).__name__, module.code_for_node(node)[:40], sorted(expected.get(node, ())), sorted(q.name for q in mine[node]))
        for node in cstutil.descendants(module)
        if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString))
        and expected.get(node, set()) != {q.name for q in mine[node]}
    ]
    assert not differences


def test_scope_rules_are_exercised() -> None:
    """The hand-written source above really meets the rules it is there for."""
    module = cst.parse_module(SCOPES)
    mine = QualifiedNames(module)
    calls = {module.code_for_node(c): {q.name for q in mine[c]} for c in cstutil.of_types(module, cst.Call)}
    assert calls["torch.distributed.barrier()"] == {"torch.distributed.barrier"}
    assert calls["DataLoader(1)"] == {"DataLoader"}  # rebound at module level: a local now
    assert calls["torch.arange(3)"] == {"torch.arange"}  # first iterable: outside the comprehension
    assert calls["print(len)"] == {"builtins.print"}
    assert calls["state(1)"] == {"outer.<locals>.state"}
    assert {q.name for q in mine[module.body[0]]} == set()  # statements have no name


def _scope_node(scope: object, module: cst.Module) -> cst.CSTNode:
    return getattr(scope, "node", module)  # libcst's GlobalScope has no node


@pytest.mark.parametrize("name, source", SOURCES[:40], ids=[name for name, _ in SOURCES[:40]])
def test_bindings_equal_libcst_scope_lookup(name: str, source: str) -> None:
    """BindingProvider answers what ``ScopeProvider``'s ``scope[name]`` answers for every Name."""
    from libcst.metadata import BuiltinAssignment, ScopeProvider

    module = cst.parse_module(source)
    scopes = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    mine = QualifiedNames(module)
    compared = 0
    for node in cstutil.of_types(module, cst.Name):
        scope = scopes.get(node)
        if scope is None:
            continue
        compared += 1
        expected = {
            (_scope_node(a.scope, module), isinstance(a.node, cst.Param))
            for a in scope[node.value]
            if not isinstance(a, BuiltinAssignment)
        }
        assert {(b.scope, b.parameter) for b in mine.bindings_of(node)} == expected, module.code_for_node(node)
    assert compared or not source.strip()
