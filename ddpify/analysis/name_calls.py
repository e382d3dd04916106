"""Which of the file's functions a call may run, found by name and narrowed by the receiver
where the file says, and the inverse: the calls that may run a function. This is the cheap
over-approximation the fixpoints (rank tests, loops, divergence) iterate on;
``analysis.callgraph`` resolves receivers fully for the questions that need one answer.

Bounded cost. Matching ``obj.f(...)`` by name alone pairs each call with every method named
``f``: a file of n classes whose same-named methods call each other is n² pairs, and every
analysis over calls works on each pair. So the receiver narrows first:

- ``self.f(...)`` / ``cls.f(...)`` in class ``C`` runs the ``f`` that ``C`` defines or inherits
  from a class of this file, or an override in one of ``C``'s subclasses here (at most
  ``OVERRIDES`` of them);
- ``super().f(...)`` runs the first ``f`` among the class's bases here (none: a base
  installed elsewhere, such as ``nn.Module.__init__``);
- ``Trainer.f(...)`` and ``Trainer(...).f(...)`` run ``Trainer``'s own or inherited ``f``;
- where ``C`` or a subclass of it has several bases (a mixin may come first in the method
  order), and for any other receiver, the call matches every method named ``f``, while the
  methods of that name times its calls stay within ``PAIRS``. Past that, the call's target is
  one this file does not tell, as for a call of an installed package: that much same-named
  code is generated, where guessing costs n² pairs and tells nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Protocol

import libcst as cst
from libcst.metadata import CodeRange

OVERRIDES = 16
PAIRS = 4096
_DEPTH = 8  # inheritance followed this far (a cycle of same-named classes ends here)


class Code(Protocol):
    """What the index reads of a file (``analysis.source.Source`` provides it)."""

    @property
    def functions(self) -> dict[str, list[cst.FunctionDef]]: ...
    @property
    def calls_by_callee(self) -> dict[str, list[cst.Call]]: ...
    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]: ...
    def position(self, node: cst.CSTNode) -> CodeRange: ...
    def is_method(self, function: cst.FunctionDef) -> bool: ...
    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None: ...
    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None: ...
    def defined_in(self, klass: cst.ClassDef | None, name: str) -> list[cst.FunctionDef]: ...
    def of_types(self, kind: type[cst.ClassDef], /) -> list[cst.ClassDef]: ...


class NameCalls:
    """The call index of one file (see the module docstring); built on first use, once."""

    def __init__(self, source: Code) -> None:
        self.source = source
        self._targets: dict[cst.Call, tuple[cst.FunctionDef, ...]] = {}
        self._sites: dict[cst.FunctionDef, list[cst.Call]] = {}

    def functions_called(self, call: cst.Call, *, own_methods_only: bool = False) -> list[cst.FunctionDef]:
        """``f(...)``: the file's functions named ``f`` that are no methods (a nested one inside
        its own scope only); ``x.f(...)``: its methods named ``f``, narrowed by the receiver
        (only ``self.f`` / ``cls.f`` with ``own_methods_only``)."""
        func = call.func
        if isinstance(func, cst.Name):
            scopes = [None, *(a for a in self.source.ancestors(call) if isinstance(a, cst.FunctionDef))]
            return [f for scope in scopes for f in self._plain_functions.get((scope, func.value), [])]
        if isinstance(func, cst.Attribute):
            if own_methods_only and not _is_self(func.value):
                return []
            return list(self._methods_run(call, func))
        return []

    def call_sites(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The calls outside ``function`` that may run it (its own recursion left out)."""
        found = self._sites.get(function)
        if found is None:
            source = self.source
            if source.is_method(function):
                candidates = self._method_sites.get(function, [])
            else:
                calls = self._plain_calls.get(function.name.value, [])
                candidates = [c for c in calls if function in self.functions_called(c)]
            span = source.position(function)
            start, end = (span.start.line, span.start.column), (span.end.line, span.end.column)
            found = [c for c in candidates if not start <= _start(source, c) <= end]
            self._sites[function] = found
        return found

    # ------------------------------------------------------------------ indexes
    @functools.cached_property
    def _plain_functions(self) -> dict[tuple[cst.FunctionDef | None, str], list[cst.FunctionDef]]:
        """The functions that are no methods, by the function they are nested in (None: the
        module) and their name: where a plain-name call can find them."""
        found: dict[tuple[cst.FunctionDef | None, str], list[cst.FunctionDef]] = {}
        for name, functions in self.source.functions.items():
            for function in functions:
                if not self.source.is_method(function):
                    found.setdefault((self.source.enclosing_function(function), name), []).append(function)
        return found

    @functools.cached_property
    def _plain_calls(self) -> dict[str, list[cst.Call]]:
        return {name: [c for c in calls if isinstance(c.func, cst.Name)] for name, calls in self.source.calls_by_callee.items()}

    @functools.cached_property
    def _methods_named(self) -> dict[str, tuple[cst.FunctionDef, ...]]:
        found = {name: tuple(f for f in functions if self.source.is_method(f)) for name, functions in self.source.functions.items()}
        return {name: methods for name, methods in found.items() if methods}

    @functools.cached_property
    def _method_sites(self) -> dict[cst.FunctionDef, list[cst.Call]]:
        """Each method's candidate calls, from one pass over the attribute calls (source order)."""
        found: dict[cst.FunctionDef, list[cst.Call]] = {}
        for name, calls in self.source.calls_by_callee.items():
            if name not in self._methods_named:
                continue
            for call in calls:
                if isinstance(call.func, cst.Attribute):
                    for method in self._methods_run(call, call.func):
                        found.setdefault(method, []).append(call)
        return found

    @functools.cached_property
    def _classes(self) -> dict[str, list[cst.ClassDef]]:
        found: dict[str, list[cst.ClassDef]] = {}
        for klass in self.source.of_types(cst.ClassDef):
            found.setdefault(klass.name.value, []).append(klass)
        return found

    @functools.cached_property
    def _subclasses(self) -> dict[cst.ClassDef, list[cst.ClassDef]]:
        found: dict[cst.ClassDef, list[cst.ClassDef]] = {}
        for klasses in self._classes.values():
            for klass in klasses:
                for base in self._bases(klass):
                    found.setdefault(base, []).append(klass)
        return found

    def _bases(self, klass: cst.ClassDef) -> list[cst.ClassDef]:
        """The classes of this file ``klass`` names as bases (by their name)."""
        names = [_last_name(b.value) for b in klass.bases if b.keyword is None]
        return [base for name in names if name is not None for base in self._classes.get(name, []) if base is not klass]

    # ------------------------------------------------------------------ narrowing
    def _methods_run(self, call: cst.Call, func: cst.Attribute) -> tuple[cst.FunctionDef, ...]:
        found = self._targets.get(call)
        if found is None:
            found = self._targets[call] = self._narrowed(call, func.value, func.attr.value)
        return found

    def _narrowed(self, call: cst.Call, receiver: cst.BaseExpression, name: str) -> tuple[cst.FunctionDef, ...]:
        every = self._methods_named.get(name, ())
        if not every:
            return ()
        klass = self.source.enclosing_class(call) if _is_self(receiver) or _is_super(receiver) else None
        if klass is not None:
            overrides, mixed = self._overrides(klass, name)
            if _is_super(receiver) and not mixed:
                return tuple(m for base in self._bases(klass) for m in self._inherited(base, name, 0)[:1])
            own = self._inherited(klass, name, 0) if _is_self(receiver) and not mixed else []
            if own:
                return (own[0], *overrides) if len(overrides) <= OVERRIDES else (own[0],)
        elif not _is_self(receiver) and not _is_super(receiver):
            named = receiver.func if isinstance(receiver, cst.Call) else receiver  # Trainer.f, Trainer(...).f
            klasses = self._classes.get(named.value, []) if isinstance(named, cst.Name) else []
            if klasses:
                return tuple(m for klass in klasses for m in self._inherited(klass, name, 0)[:1])
        return every if len(every) * len(self.source.calls_by_callee.get(name, ())) <= PAIRS else ()

    def _inherited(self, klass: cst.ClassDef, name: str, depth: int) -> list[cst.FunctionDef]:
        """``klass``'s own method ``name`` first, then its bases' here (depth first, as the MRO
        of single inheritance)."""
        own = self.source.defined_in(klass, name)
        if own or depth >= _DEPTH:
            return own[-1:]  # a later ``def`` of the same name replaces an earlier one
        return [m for base in self._bases(klass) for m in self._inherited(base, name, depth + 1)]

    def _overrides(self, klass: cst.ClassDef, name: str) -> tuple[list[cst.FunctionDef], bool]:
        """Methods ``name`` of ``klass``'s subclasses here (``self.f`` may run them), and whether
        ``klass`` or one of them has several bases (then a sibling base's ``f`` may come first)."""
        found: list[cst.FunctionDef] = []
        seen = {klass}
        frontier = [klass]
        mixed = _several_bases(klass)
        for _ in range(_DEPTH):
            frontier = [s for k in frontier for s in self._subclasses.get(k, []) if s not in seen]
            seen.update(frontier)
            found.extend(m for s in frontier for m in self.source.defined_in(s, name))
            mixed = mixed or any(_several_bases(s) for s in frontier)
            if not frontier or len(found) > OVERRIDES:
                break
        return found, mixed


def _several_bases(klass: cst.ClassDef) -> bool:
    return sum(b.keyword is None for b in klass.bases) > 1


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("self", "cls")


def _is_super(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"


def _last_name(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else None


def _start(source: Code, node: cst.CSTNode) -> tuple[int, int]:
    start = source.position(node).start
    return start.line, start.column
