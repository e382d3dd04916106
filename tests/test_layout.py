"""The house rules of ``ddpify/``, read from its own import statements: no import cycles, no
module over 500 lines, and the infrastructure (``ddpify.tree``) and the shared analysis
(``ddpify.analysis``) never import the converter, the linter or the CLI built on them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ddpify"
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every ddpify module ``name`` imports, at any level (TYPE_CHECKING and function-level
    imports included: a cycle hidden in a function is still a cycle)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target.startswith("ddpify") and target != name:
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _reachable(start: str) -> set[str]:
    seen: set[str] = set()
    pending = list(GRAPH[start])
    while pending:
        current = pending.pop()
        if current not in seen:
            seen.add(current)
            pending.extend(GRAPH[current])
    return seen


def test_no_import_cycles() -> None:
    cycles = sorted(name for name in GRAPH if name in _reachable(name))
    assert not cycles, f"modules on an import cycle: {cycles}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it by concern"


@pytest.mark.parametrize("layer", ["ddpify.tree", "ddpify.analysis"])
def test_lower_layers_do_not_import_upper_ones(layer: str) -> None:
    allowed = ("ddpify.tree", "ddpify.analysis") if layer == "ddpify.analysis" else ("ddpify.tree",)
    for name in (n for n in GRAPH if n == layer or n.startswith(layer + ".")):
        wrong = {m for m in GRAPH[name] if not m.startswith(allowed) and m != "ddpify"}
        assert not wrong, f"{name} imports {sorted(wrong)}"
