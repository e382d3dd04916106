"""libcst's ``QualifiedNameProvider`` answers, without libcst's scope analysis.

Every ddpify question about a name is "which import (or builtin) does this expression come
from?": ``DataLoader(...)`` is ``torch.utils.data.DataLoader``, ``dist.barrier`` is
``torch.distributed.barrier``, ``print`` is ``builtins.print``. libcst answers through its
``ScopeProvider``, which first runs an ``ExpressionContextProvider`` pass, records every access
and assignment of every name, and parses string annotations: most of a one-file ``ddpify check``.

Here the same answers come from the bindings alone. One pass over the flat tree
(``ddpify.tree.cstutil``) records, per scope (module, function, lambda, class, comprehension), the
names each binds and how (import, assignment, definition, parameter, ...); a query walks the
scope chain of the asked node the way libcst does -- class bodies invisible to nested scopes,
``global``/``nonlocal`` honoured, the first iterable of a comprehension evaluated outside it,
parameter defaults and decorators in the enclosing scope, a name read before its first binding
in its own scope resolved further out -- and builds the qualified names libcst builds (imports
with aliases and relative modules, ``builtins.*``, ``f.<locals>.x`` for locals). Equality with
``QualifiedNameProvider`` is tested on every fixture and example; on 900 files of
pytorch/examples, torchvision and timm the answers differ only for string annotations (libcst
parses them; ddpify never asks about them) and for one libcst quirk (a name read in the ``if``
of a nested ``for`` of a comprehension, bound by that same ``for``: libcst resolves it
nowhere, this module to the comprehension's variable).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import BaseMetadataProvider, QualifiedName, QualifiedNameSource

from ddpify.tree import cstutil

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_SCOPES = (cst.Module, cst.FunctionDef, cst.Lambda, cst.ClassDef, *_COMPREHENSIONS)
_ImportNode = cst.Import | cst.ImportFrom
_EMPTY: frozenset[QualifiedName] = frozenset()
# The import statements a star import (module, relative level) brings in: ``import torch`` of
# the project module it names (``ddpify.analysis.star_imports``).
StarImports = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True)
class _Binding:
    """One binding of a name: ``node`` is the import statement, or the bound Name/def/class."""

    node: cst.CSTNode
    visible_from: int  # flat index from which reads in the same scope see it
    parameter: bool = False


@dataclass(frozen=True)
class NameBinding:
    """A binding a name resolves to: the scope holding it (a Module, FunctionDef, Lambda,
    ClassDef or comprehension node) and whether it is a function parameter."""

    scope: cst.CSTNode
    parameter: bool


class _Scope:
    def __init__(self, node: cst.CSTNode, parent: _Scope | None, prefix: str) -> None:
        self.node = node
        self.parent = parent
        self.prefix = prefix  # libcst's qualified-name prefix: "", "f.<locals>", "C", ...
        self.bindings: dict[str, list[_Binding]] = {}
        self.declared: dict[str, str] = {}  # name -> "global" | "nonlocal"

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, cst.ClassDef)

    def visible_parent(self) -> _Scope | None:
        """The next enclosing scope whose names this scope sees (class bodies are skipped)."""
        parent = self.parent
        while parent is not None and parent.is_class:
            parent = parent.parent
        return parent


class QualifiedNames(Mapping[cst.CSTNode, frozenset[QualifiedName]]):
    """``QualifiedNameProvider``'s mapping for one module; each answer computed when asked."""

    def __init__(
        self,
        module: cst.Module,
        parents: Mapping[cst.CSTNode, cst.CSTNode] | None = None,
        star_imports: StarImports | None = None,
    ) -> None:
        self._module = module
        self._star_imports = star_imports
        self._flat, _ = cstutil.flatten(module)
        self._parents = parents if parents is not None else cstutil.parents(module)
        self._scope_of_node: dict[cst.CSTNode, _Scope] = {}
        self._binding_names: dict[cst.CSTNode, _Binding] = {}  # bound Name/def/class -> its binding
        self._answers: dict[cst.CSTNode, frozenset[QualifiedName]] = {}
        self._root = _Scope(module, None, "")
        self._scopes: dict[cst.CSTNode, _Scope] = {module: self._root}
        self._collect()

    # ------------------------------------------------------------------ Mapping
    def __getitem__(self, node: cst.CSTNode) -> frozenset[QualifiedName]:
        found = self._answers.get(node)
        if found is None:
            found = self._answers[node] = self._resolve(node)
        return found

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._flat.nodes)

    def __len__(self) -> int:
        return len(self._flat.nodes)

    def __contains__(self, node: object) -> bool:
        return self._flat.position(node) is not None  # type: ignore[arg-type]

    # ------------------------------------------------------------------ scopes
    def _scope(self, node: cst.CSTNode) -> _Scope:
        """The scope whose names ``node`` reads (libcst's ScopeProvider answer)."""
        found = self._scope_of_node.get(node)
        if found is not None:
            return found
        child, current = node, self._parents.get(node)
        escape = False  # a parameter default/annotation: evaluated outside its function
        first_iterable = False  # the first iterable of a comprehension: evaluated outside it
        while current is not None:
            if isinstance(current, cst.Param) and child in (current.default, current.annotation):
                escape = True
            elif isinstance(current, cst.CompFor) and child is current.iter:
                first_iterable = self._parents.get(current) is not None and getattr(self._parents[current], "for_in", None) is current
            elif isinstance(current, _COMPREHENSIONS) and first_iterable:
                first_iterable = False
                child, current = current, self._parents.get(current)
                continue
            if isinstance(current, _SCOPES) and _opens_scope(current, child):
                scope = self._scope_for(current)
                if escape and isinstance(current, (cst.FunctionDef, cst.Lambda)):
                    assert scope.parent is not None
                    scope, escape = scope.parent, False
                self._scope_of_node[node] = scope
                return scope
            child, current = current, self._parents.get(current)
        return self._root

    def _scope_for(self, node: cst.CSTNode) -> _Scope:
        scope = self._scopes.get(node)
        if scope is None:
            parent = self._scope(node)
            scope = self._scopes[node] = _Scope(node, parent, _prefix(node, parent.prefix))
        return scope

    # ------------------------------------------------------------------ bindings
    def _collect(self) -> None:
        flat = self._flat
        for node in flat.of_types(_BINDING_SITES, 0, len(flat.nodes)):
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                self._bind_import(node)
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                scope = self._scope(node)
                kind = "global" if isinstance(node, cst.Global) else "nonlocal"
                for item in node.names:
                    scope.declared[item.name.value] = kind
            else:
                for name, target in _bound_names(node):
                    parameter = isinstance(node, cst.Param)
                    self._bind(self._scope(target), name, target, self._visible_from(node, target), parameter=parameter)

    def _bind_import(self, node: _ImportNode) -> None:
        if isinstance(node.names, cst.ImportStar):
            self._bind_star(node)
            return
        scope = self._scope(node)
        visible = self._flat.ends[self._flat.position(node)]  # type: ignore[index]
        self._bind_aliases(scope, node, visible)

    def _bind_star(self, node: cst.ImportFrom) -> None:
        """``from utils import *``: the imports ``star_imports`` says it brings in (``import torch``
        of a project module), bound where the star import stands."""
        if self._star_imports is None:
            return
        module = get_full_name_for_node(node.module) if node.module is not None else ""
        scope = self._scope(node)
        visible = self._flat.ends[self._flat.position(node)]  # type: ignore[index]
        for text in self._star_imports(module or "", len(node.relative)):
            statement = cst.parse_statement(text)
            brought = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if isinstance(brought, (cst.Import, cst.ImportFrom)) and not isinstance(brought.names, cst.ImportStar):
                self._bind_aliases(scope, brought, visible)

    def _bind_aliases(self, scope: _Scope, node: _ImportNode, visible: int) -> None:
        assert not isinstance(node.names, cst.ImportStar)
        for alias in node.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if not isinstance(bound, (cst.Name, cst.Attribute)):
                continue
            for dotted in _dotted_prefixes(bound):
                self._bind(scope, dotted, node, visible, register=False)

    def _bind(self, scope: _Scope, name: str, node: cst.CSTNode, visible: int, register: bool = True, parameter: bool = False) -> None:
        target = self._declared_target(scope, name)
        binding = _Binding(node, visible, parameter)
        target.bindings.setdefault(name, []).append(binding)
        if register:
            self._binding_names[node] = binding

    def _declared_target(self, scope: _Scope, name: str) -> _Scope:
        """Where a binding of ``name`` in ``scope`` lands (``global``/``nonlocal`` move it)."""
        kind = scope.declared.get(name)
        if kind == "global":
            return self._root
        if kind == "nonlocal":
            parent = scope.visible_parent()
            return self._declared_target(parent, name) if parent is not None else scope
        return scope

    def _visible_from(self, site: cst.CSTNode, target: cst.CSTNode) -> int:
        """libcst counts an assignment as made when its assignment-like node is left (the
        right-hand side of ``x = f(x)`` reads the older ``x``); a ``for`` target, before the
        iterable and the body; a definition's name, before the body; a comprehension's
        targets, before its element (which comes first in the source)."""
        flat = self._flat
        if isinstance(site, cst.CompFor):
            return flat.position(self._scope(target).node)  # type: ignore[return-value]
        if isinstance(site, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.FunctionDef, cst.ClassDef)):
            return flat.ends[flat.position(site)]  # type: ignore[index]
        return flat.ends[flat.position(target)]  # type: ignore[index]

    # ------------------------------------------------------------------ queries
    def bindings_of(self, node: cst.Name) -> tuple[NameBinding, ...]:
        """The bindings ``node``'s name resolves to from its scope, in any order of execution
        (libcst's ``scope[name]``); empty for builtins and unknown names."""
        found = self._lookup(node.value, self._scope(node))
        if found is None or found[0] is None:
            return ()
        owner, bindings = found
        assert owner is not None
        return tuple(dict.fromkeys(NameBinding(owner.node, b.parameter) for b in bindings))

    def _resolve(self, node: cst.CSTNode) -> frozenset[QualifiedName]:
        if self._flat.position(node) is None or not _answerable(node, self._parents):
            return _EMPTY
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return _EMPTY
        scope = self._scope(node)
        own = self._binding_names.get(node)
        if own is not None:
            home = self._home(scope, node)
            return _local_names(home, full_name)
        if isinstance(node, cst.Name) and _is_read(node, self._parents):
            return self._resolve_read(node, scope)
        prefix: str | None = full_name
        while prefix:
            found = self._lookup(prefix, scope)
            if found is not None:
                owner, bindings = found
                return _names_for(owner, bindings, full_name)
            cut = prefix.rfind(".")
            prefix = prefix[:cut] if cut != -1 else None
        return _EMPTY

    def _home(self, scope: _Scope, node: cst.CSTNode) -> _Scope:
        name = node.value if isinstance(node, cst.Name) else node.name.value  # type: ignore[attr-defined]
        return self._declared_target(scope, name)

    def _lookup(self, name: str, scope: _Scope) -> tuple[_Scope | None, list[_Binding]] | None:
        """The scope that decides ``name`` and its bindings there (None owner: builtins)."""
        current: _Scope | None = scope
        while current is not None:
            kind = current.declared.get(name)
            if kind == "global":
                current = self._root
            elif kind == "nonlocal":
                current = current.visible_parent()
                continue
            bindings = current.bindings.get(name)
            if bindings:
                return current, bindings
            current = current.visible_parent()
        if hasattr(builtins, name):
            return None, []
        return None

    def _resolve_read(self, node: cst.Name, scope: _Scope) -> frozenset[QualifiedName]:
        """A read sees only the bindings of its own scope made before it; with none made yet
        (but some later), the enclosing scopes decide."""
        name = node.value
        found = self._lookup(name, scope)
        if found is None:
            return _EMPTY
        owner, bindings = found
        if owner is scope and not scope.declared.get(name):
            position = self._flat.position(node)
            earlier = [b for b in bindings if b.visible_from <= position]  # type: ignore[operator]
            if not earlier:
                parent = scope.parent
                found = self._lookup(name, parent) if parent is not None else None
                if found is None:
                    return _EMPTY
                owner, earlier = found
            bindings = earlier
        return _names_for(owner, bindings, name)


# ---------------------------------------------------------------------- helpers
_BINDING_SITES = (
    "Import",
    "ImportFrom",
    "Global",
    "Nonlocal",
    "Assign",
    "AnnAssign",
    "AugAssign",
    "For",
    "CompFor",
    "NamedExpr",
    "WithItem",
    "ExceptHandler",
    "ExceptStarHandler",
    "FunctionDef",
    "ClassDef",
    "Param",
)  # libcst records no bindings for ``match`` patterns; neither does this module


def _bound_names(site: cst.CSTNode) -> Iterator[tuple[str, cst.CSTNode]]:
    """The (name, node) pairs a binding site binds (``del x`` counts, as in libcst)."""
    if isinstance(site, cst.Assign):
        for target in site.targets:
            yield from _target_names(target.target)
    elif isinstance(site, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        yield from _target_names(site.target)
    elif isinstance(site, cst.WithItem) and site.asname is not None:
        yield from _target_names(site.asname.name)
    elif isinstance(site, (cst.ExceptHandler, cst.ExceptStarHandler)) and site.name is not None:
        yield from _target_names(site.name.name)
    elif isinstance(site, (cst.FunctionDef, cst.ClassDef)):
        yield site.name.value, site
    elif isinstance(site, cst.Param):
        yield site.name.value, site.name


def _target_names(target: cst.BaseExpression) -> Iterator[tuple[str, cst.CSTNode]]:
    if isinstance(target, cst.Name):
        yield target.value, target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def _dotted_prefixes(node: cst.BaseExpression) -> Iterator[str]:
    """``a.b.c`` -> ``a.b.c``, ``a.b``, ``a``: the names an ``import a.b.c`` records in libcst."""
    full = get_full_name_for_node(node)
    while full:
        yield full
        cut = full.rfind(".")
        full = full[:cut] if cut != -1 else ""


def _opens_scope(scope_node: cst.CSTNode, child: cst.CSTNode) -> bool:
    """Whether a child of ``scope_node`` is evaluated inside the scope it opens."""
    if isinstance(scope_node, cst.Module):
        return True
    if isinstance(scope_node, cst.FunctionDef):
        return child is scope_node.body or child is scope_node.params
    if isinstance(scope_node, cst.Lambda):
        return child is scope_node.body or child is scope_node.params
    if isinstance(scope_node, cst.ClassDef):
        return child is scope_node.body
    return True  # a comprehension (its first iterable is left out by the caller)


def _prefix(node: cst.CSTNode, parent_prefix: str) -> str:
    if isinstance(node, cst.FunctionDef):
        parts = [parent_prefix, node.name.value, "<locals>"]
    elif isinstance(node, cst.Lambda):
        parts = [parent_prefix, "<locals>"]
    elif isinstance(node, cst.ClassDef):
        parts = [parent_prefix, node.name.value]
    else:
        parts = [parent_prefix, "<comprehension>"]
    return ".".join(p for p in parts if p)


def _answerable(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    """libcst gives no answer for names it never visits: attribute names, keyword names,
    the names of ``global``/``nonlocal`` statements and the names inside imports."""
    parent = parents.get(node)
    if isinstance(parent, cst.Attribute) and node is parent.attr:
        return False
    if isinstance(parent, cst.NameItem):
        return False
    if isinstance(parent, cst.Arg) and node is parent.keyword:
        return False
    current: cst.CSTNode | None = parent
    while current is not None and not isinstance(current, (cst.BaseStatement, cst.BaseSmallStatement)):
        if isinstance(current, (cst.ImportAlias, cst.AsName)) and isinstance(parents.get(current), (cst.Import, cst.ImportFrom)):
            return False
        current = parents.get(current)
    return not isinstance(current, (cst.Import, cst.ImportFrom))


def _is_read(node: cst.Name, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    parent = parents.get(node)
    return not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param))


def _local_names(scope: _Scope, full_name: str) -> frozenset[QualifiedName]:
    name = f"{scope.prefix}.{full_name}" if scope.prefix else full_name
    return frozenset({QualifiedName(name, QualifiedNameSource.LOCAL)})


def _names_for(owner: _Scope | None, bindings: list[_Binding], full_name: str) -> frozenset[QualifiedName]:
    if owner is None:  # builtins
        head = full_name.split(".", 1)[0]
        return frozenset({QualifiedName(f"builtins.{head}", QualifiedNameSource.BUILTIN)})
    names: set[QualifiedName] = set()
    for binding in bindings:
        if isinstance(binding.node, (cst.Import, cst.ImportFrom)):
            names |= _import_names(binding.node, full_name)
        else:
            names |= _local_names(owner, full_name)
    return frozenset(names)


def _import_names(node: _ImportNode, full_name: str) -> set[QualifiedName]:
    """libcst's ``ImportAssignment.get_qualified_names_for``: the module path ``full_name``
    stands for through one of this statement's aliases."""
    module = ""
    if isinstance(node, cst.ImportFrom):
        if node.module is not None:
            module = get_full_name_for_node(node.module) or ""
        if node.relative:
            module = "." * len(node.relative) + module
    results: set[QualifiedName] = set()
    assert not isinstance(node.names, cst.ImportStar)
    for alias in node.names:
        real = get_full_name_for_node(alias.name)
        if not real:
            continue
        parts = real.split(".")
        for real_name in (".".join(parts[:i]) for i in range(len(parts), 0, -1)):
            as_name = real_name
            if module.endswith("."):
                real_name = f"{module}{real_name}"
            elif module:
                real_name = f"{module}.{real_name}"
            if alias.asname is not None:
                as_name = get_full_name_for_node(alias.asname.name) or as_name
            if full_name.startswith(as_name):
                rest = full_name.split(as_name, 1)[1]
                if rest and not rest.startswith("."):
                    continue
                rest = rest.lstrip(".")
                results.add(QualifiedName(f"{real_name}.{rest}" if rest else real_name, QualifiedNameSource.IMPORT))
                break
    return results


class BindingProvider(BaseMetadataProvider["tuple[NameBinding, ...]"]):
    """For every ``Name``: the bindings it resolves to (:meth:`QualifiedNames.bindings_of`).
    Tells two variables of the same name apart (``model`` in ``main()`` and an argparse group
    called ``model`` elsewhere) without libcst's ``ScopeProvider``."""

    def _gen_impl(self, module: cst.Module) -> None:
        names = QualifiedNames(module)
        for node in cstutil.of_types(module, cst.Name):
            self.set_metadata(node, names.bindings_of(node))


class Bindings(Mapping[cst.CSTNode, "tuple[NameBinding, ...]"]):
    """``BindingProvider``'s mapping over a :class:`QualifiedNames`, answered on request."""

    def __init__(self, names: QualifiedNames) -> None:
        self._names = names

    def __getitem__(self, node: cst.CSTNode) -> tuple[NameBinding, ...]:
        if not isinstance(node, cst.Name) or node not in self._names:
            raise KeyError(node)
        return self._names.bindings_of(node)

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (node for node in self._names if isinstance(node, cst.Name))

    def __len__(self) -> int:
        return sum(1 for _ in self)
