"""Read ``ddpify/runtime/*.py`` as source and pick out what a set of helpers needs.

``--standalone`` embeds the runtime into a converted script. Copying the real source (rather
than keeping a second, hand-written copy) means the embedded helpers cannot drift from the
runtime that the test suite checks. This module never imports the runtime (that needs torch):
it parses it with libcst and follows names from definition to definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from ddpify.errors import InternalError

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"

Key = tuple[str, str]  # (module, top-level name)
ImportNode = cst.Import | cst.ImportFrom


class _References(cst.CSTVisitor):
    """Names a statement reads, plus ``alias.attr`` reads of sibling modules (``_seed.x``).

    Over-approximates (a local variable named like a global counts), which can only embed a
    little more than needed, never less.
    """

    def __init__(self, module_aliases: set[str]) -> None:
        self.names: set[str] = set()
        self.attributes: set[Key] = set()
        self._module_aliases = module_aliases

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if isinstance(node.value, cst.Name) and node.value.value in self._module_aliases:
            self.attributes.add((node.value.value, node.attr.value))
        node.value.visit(self)
        return False  # the attribute name itself is no reference

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # skip the keyword
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        for part in (node.annotation, node.default):
            if part is not None:
                part.visit(self)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for part in (*node.decorators, node.params, node.returns, node.body):
            if part is not None:
                part.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for part in (*node.decorators, *node.bases, *node.keywords, node.body):
            part.visit(self)
        return False


def _dotted(node: cst.BaseExpression) -> str:
    return cst.Module([]).code_for_node(node)


@dataclass
class RuntimeModule:
    """One runtime module: what each top-level statement defines and reads."""

    name: str
    tree: cst.Module
    defines: dict[str, int] = field(default_factory=dict)  # name -> statement index
    imported: dict[str, tuple[int, Key | None]] = field(default_factory=dict)  # bound name -> (index, sibling origin)
    always: list[int] = field(default_factory=list)  # docstring, __future__

    @classmethod
    def parse(cls, name: str, text: str) -> RuntimeModule:
        module = cls(name, cst.parse_module(text))
        for index, statement in enumerate(module.tree.body):
            module._index(index, statement)
        return module

    def _index(self, index: int, statement: cst.BaseStatement) -> None:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self.defines[statement.name.value] = index
            return
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            raise InternalError(
                f"ddpify/runtime/{self.name}.py: top-level statement the standalone embedder "
                f"cannot follow:\n{self.tree.code_for_node(statement)}"
            )
        small = statement.body[0]
        if isinstance(small, cst.Expr) and index == 0:
            self.always.append(index)  # the module docstring says why the module exists
        elif isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__":
            self.always.append(index)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            for bound, origin in _bindings(small):
                self.imported[bound] = (index, origin)
        elif isinstance(small, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            for target in targets:
                if isinstance(target, cst.Name) and target.value != "__all__":
                    self.defines[target.value] = index
        else:
            raise InternalError(f"ddpify/runtime/{self.name}.py: unexpected top-level statement for --standalone")

    def references(self, name: str) -> _References:
        aliases = {bound for bound, (_, origin) in self.imported.items() if origin is not None and origin[1] == ""}
        visitor = _References(aliases)
        self.tree.body[self.defines[name]].visit(visitor)
        return visitor


def _bindings(node: ImportNode) -> list[tuple[str, Key | None]]:
    """(bound name, (sibling module, name) for ``from ._x import name`` / ``(x, "")`` for
    ``from . import _x``; None for an outside import)."""
    if isinstance(node, cst.Import):
        return [(_bound(alias, top_level=True), None) for alias in node.names]
    assert not isinstance(node.names, cst.ImportStar), "the runtime never star-imports"
    relative = bool(node.relative)
    out: list[tuple[str, Key | None]] = []
    for alias in node.names:
        imported = _dotted(alias.name)
        origin: Key | None = None
        if relative:
            origin = (node.module.value, imported) if isinstance(node.module, cst.Name) else (imported, "")
        out.append((_bound(alias, top_level=False), origin))
    return out


def _bound(alias: cst.ImportAlias, *, top_level: bool) -> str:
    if alias.asname is not None:
        return _dotted(alias.asname.name)
    name = _dotted(alias.name)
    return name.split(".")[0] if top_level else name


def load_runtime() -> dict[str, RuntimeModule]:
    """Every runtime module (``_data``, ``_env``, ...) plus the package ``__init__``."""
    return {path.stem: RuntimeModule.parse(path.stem, path.read_text(encoding="utf-8")) for path in sorted(RUNTIME_DIR.glob("*.py"))}


def exports(runtime: dict[str, RuntimeModule]) -> dict[str, Key]:
    """Public helper name -> where it is defined, read from the package ``__init__``."""
    return {bound: origin for bound, (_, origin) in runtime["__init__"].imported.items() if origin is not None}


def needed(runtime: dict[str, RuntimeModule], roots: list[Key]) -> dict[str, set[str]]:
    """Module -> top-level names needed by ``roots`` and, transitively, by what they read."""
    keep: dict[str, set[str]] = {}
    work = list(roots)
    while work:
        module_name, name = work.pop()
        module = runtime[module_name]
        if name in keep.get(module_name, set()):
            continue
        keep.setdefault(module_name, set()).add(name)
        if name in module.imported:
            origin = module.imported[name][1]
            if origin is not None and origin[1]:
                work.append(origin)
            continue
        if name not in module.defines:
            raise InternalError(f"ddpify/runtime/{module_name}.py defines no {name!r}")
        refs = module.references(name)
        work.extend((module_name, ref) for ref in refs.names if ref in module.defines or ref in module.imported)
        for alias, attribute in refs.attributes:
            origin = module.imported[alias][1]
            assert origin is not None
            work.append((origin[0], attribute))
    return keep


def pruned_source(module: RuntimeModule, names: set[str]) -> str:
    """The module's text with only the needed definitions and the imports they read."""
    parts: list[str] = []
    for index, statement in enumerate(module.tree.body):
        if index in module.always or index in {module.defines.get(n) for n in names}:
            parts.append(module.tree.code_for_node(statement))
            continue
        bound_here = [b for b, (i, _) in module.imported.items() if i == index]
        if not bound_here:
            continue
        assert isinstance(statement, cst.SimpleStatementLine)
        node = statement.body[0]
        assert isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar)
        aliases = [a for a in node.names if _bound(a, top_level=isinstance(node, cst.Import)) in names]
        if aliases:
            aliases = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
            trimmed = (
                node.with_changes(names=aliases, lpar=None, rpar=None)
                if isinstance(node, cst.ImportFrom)
                else node.with_changes(names=aliases)
            )
            parts.append(module.tree.code_for_node(statement.with_changes(body=[trimmed])))
    return cst.parse_module("".join(parts).lstrip("\n")).visit(_Terse()).code


class _Terse(cst.CSTTransformer):
    """The embedded copy without docstrings, comments and blank lines inside blocks (one blank
    line between top-level definitions): about a third of the runtime's text is documentation,
    which the installed package and docs/ keep; the copy is for running, and stays short enough
    to scroll past (issue 23: a 99-line script became 1,790 lines)."""

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.RemovalSentinel:
        return cst.RemoveFromParent()

    def leave_TrailingWhitespace(
        self, original_node: cst.TrailingWhitespace, updated_node: cst.TrailingWhitespace
    ) -> cst.TrailingWhitespace:
        return updated_node.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = _undocumented(list(updated_node.body))
        spaced = [
            s.with_changes(leading_lines=[cst.EmptyLine()]) if i and isinstance(s, (cst.FunctionDef, cst.ClassDef)) else s
            for i, s in enumerate(body)
        ]
        return updated_node.with_changes(body=spaced, header=[])

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        body = _undocumented(list(updated_node.body))
        return updated_node.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])], header=cst.TrailingWhitespace())


def _undocumented(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``body`` without its docstring (a string expression as the first statement)."""
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1:
        value = first.body[0].value if isinstance(first.body[0], cst.Expr) else None
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
            return body[1:]
    return body
