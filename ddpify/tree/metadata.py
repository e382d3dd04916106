"""Metadata for one module at a fraction of libcst's cost, shared by the converter and the
checker: parents from the flat tree (``ddpify.tree.cstutil``), positions (``ddpify.tree.positions``) and
qualified names (``ddpify.tree.qualified_names``) computed when first asked for; ``run_visitor``
drives a read-only visitor without libcst's node-rebuilding traversal."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider

from ddpify.tree import cstutil
from ddpify.tree.positions import Positions
from ddpify.tree.qualified_names import BindingProvider, Bindings, QualifiedNames, StarImports


def run_visitor(wrapper: MetadataWrapper, visitor: cst.CSTVisitor) -> None:
    """Visit ``wrapper.module`` read-only with ``visitor``'s metadata resolved: the flat walk
    unless the visitor has attribute hooks (``visit_X_attr``), which only libcst calls."""
    with visitor.resolve(wrapper):
        if cstutil.has_attribute_hooks(visitor_names(type(visitor))):
            wrapper.module.visit(visitor)
        else:
            cstutil.walk(wrapper.module, visitor)


@functools.cache
def visitor_names(kind: type) -> tuple[str, ...]:
    """The ``visit_*`` / ``leave_*`` methods of a visitor class (what
    ``BatchableCSTVisitor.get_visitors`` lists, found once per class instead of per file)."""
    found: set[str] = set()
    for klass in kind.__mro__:
        if klass.__module__.startswith("libcst"):
            continue  # libcst's visitor bases: only the no-op stubs of every visit_/leave_ name
        for name in vars(klass):
            if name.startswith(("visit_", "leave_")):
                method = getattr(kind, name)
                if callable(method) and not getattr(method, "_is_no_op", False):
                    found.add(name)
    return tuple(sorted(found))


class FastMetadata(MetadataWrapper):
    """A ``MetadataWrapper`` whose parents, positions and qualified names come from ddpify's
    own providers (equal answers, tested), each computed on first request; any other provider
    is libcst's, run with read-only visits."""

    def __init__(self, module: cst.Module, star_imports: StarImports | None = None) -> None:
        """``star_imports``: what a star import of a project module binds (see ``QualifiedNames``)."""
        super().__init__(module, unsafe_skip_copy=True)
        parents = cstutil.parents(module)
        names = functools.cache(lambda: QualifiedNames(module, parents, star_imports))
        self._own: dict[type, Mapping[cst.CSTNode, object]] = {
            ParentNodeProvider: parents,
            PositionProvider: Lazy(lambda: Positions(module)),
            QualifiedNameProvider: Lazy(names),
            BindingProvider: Lazy(lambda: Bindings(names())),
        }

    def resolve(self, provider):
        if provider in self._own:
            return self._own[provider]
        return super().resolve(provider)

    def resolve_many(self, providers: Collection) -> Mapping:
        rest = [p for p in providers if p not in self._own]
        resolved: dict = {}
        if rest:
            with cstutil.read_only_visits():  # scope analysis without rebuilding the tree
                resolved = dict(super().resolve_many(rest))
        resolved.update({p: self._own[p] for p in providers if p in self._own})
        return resolved


class Lazy(Mapping):
    """A metadata mapping computed on first use."""

    def __init__(self, compute: Callable[[], Mapping]) -> None:
        self._compute = compute
        self._value: Mapping | None = None

    @property
    def value(self) -> Mapping:
        if self._value is None:
            self._value = self._compute()
        return self._value

    def __getitem__(self, key):
        return self.value[key]

    def get(self, key, default=None):
        return self.value.get(key, default)

    def __iter__(self) -> Iterator:
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

    def __contains__(self, key: object) -> bool:
        return key in self.value
