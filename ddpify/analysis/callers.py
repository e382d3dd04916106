"""Who runs a function: the code of this file that calls it or hands it over, as a graph the
per-function fixpoints (``ddpify.analysis.fixpoint``) walk from callee to caller.

Calls are matched by name, as ``Source.call_sites`` does: ``f(...)`` runs the file's functions
named ``f``; ``x.get(...)`` runs every method named ``get``. Methods that share a name share
their sites, so the graph has one node per method *name* (the string ``"get"``) that every
``get`` method points to: n same-named methods and m calls make n + m edges, not n * m.
A method also runs where its class is called, for ``__init__`` (``Model(...)``).

``sites(key)`` are the calls (and, with ``mentions``, the references that hand a function
over: ``mp.spawn(worker)``, ``callbacks=[self.log]``) of a function or a method name;
``frames(key)`` the keys whose values a site's value depends on: its enclosing function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import TypeVar

import libcst as cst

from ddpify.analysis.budget import Budget
from ddpify.analysis.fixpoint import Fixpoint
from ddpify.analysis.source import Source
from ddpify.tree.cstutil import accepts
from ddpify.tree.cstutil import code as cstutil_code

T = TypeVar("T")

Key = cst.FunctionDef | str  # a function, or a method name standing for all its calls


class Callers:
    """The caller graph of one file (see the module docstring)."""

    def __init__(self, source: Source, *, mentions: bool) -> None:
        self.source = source
        self.mentions = mentions

    def sites(self, key: Key) -> list[cst.CSTNode]:
        """The code that runs ``key`` directly: a method name's attribute calls (and mentions);
        a function's own calls (and mentions), a method's class calls when it is ``__init__``
        (the rest comes through its name's key, ``method_name``)."""
        if isinstance(key, str):
            return self._method_sites.get(key, [])
        if not self.source.is_method(key):
            calls: list[cst.CSTNode] = list(self.source.call_sites(key))
            return calls + list(self.source.mentions_of(key)) if self.mentions else calls
        return list(self.class_calls(key))

    def method_name(self, function: cst.FunctionDef) -> str | None:
        """The name key whose sites run ``function``: a method called from outside itself."""
        if not self.source.is_method(function):
            return None
        name = function.name.value
        return name if len(self._method_sites.get(name, ())) > self._calls_within.get(function, 0) else None

    def called(self, function: cst.FunctionDef) -> bool:
        """Whether any code of this file (outside it) runs ``function``."""
        return self.method_name(function) is not None or bool(self.sites(function))

    def frames(self, key: Key) -> list[Key]:
        """The keys a value at ``key`` is computed from: the method name of a method, and the
        functions enclosing its sites."""
        found: list[Key] = []
        if isinstance(key, cst.FunctionDef):
            name = self.method_name(key)
            if name is not None:
                found.append(name)
        for site in self.sites(key):
            enclosing = self.source.enclosing_function(site)
            if enclosing is not None:
                found.append(enclosing)
        return found

    @functools.cached_property
    def _method_sites(self) -> dict[str, list[cst.CSTNode]]:
        """Attribute calls (and mentions) by method name; not those of an imported module or
        name (``torch.log(x)`` runs no ``log`` method of this file)."""
        found: dict[str, list[cst.CSTNode]] = {}  # a call no method of its name accepts runs none (`self.model.train()`)
        for name, calls in self.source.calls_by_callee.items():
            shapes = _signatures([f for f in self.source.functions.get(name, []) if self.source.is_method(f)])
            found[name] = [
                c
                for c in calls
                if isinstance(c.func, cst.Attribute)
                and not self.source.of_import(c.func)
                and (not shapes or any(accepts(f, c, bound=not _static(f)) for f in shapes))
            ]
        if self.mentions:
            for name, functions in self.source.functions.items():
                method = next((f for f in functions if self.source.is_method(f)), None)
                if method is not None:  # a method's mentions depend on its name alone
                    found.setdefault(name, []).extend(self.source.mentions_of(method))
        return found

    @functools.cached_property
    def _calls_within(self) -> dict[cst.FunctionDef, int]:
        """How many sites of a method's name lie inside that method (its own recursion)."""
        found: dict[cst.FunctionDef, int] = {}
        for name, sites in self._method_sites.items():
            for site in sites:
                function = self.source.enclosing_function(site)
                while function is not None:
                    if function.name.value == name:
                        found[function] = found.get(function, 0) + 1
                    function = self.source.enclosing_function(function)
        return found

    def class_calls(self, method: cst.FunctionDef) -> list[cst.Call]:
        """``Model(...)`` for ``Model.__init__``; nothing for other methods."""
        if method.name.value != "__init__":
            return []
        klass = self.source.enclosing_class(method)
        assert klass is not None
        return [c for c in self.source.calls_by_callee.get(klass.name.value, []) if isinstance(c.func, cst.Name)]


_SHAPES = 8  # distinct signatures of one method name matched against its calls; past this, none is


def _signatures(methods: list[cst.FunctionDef]) -> list[cst.FunctionDef]:
    """One method per distinct signature (same-named methods mostly share one), so matching a
    call costs the same whatever the number of classes; none when there are more than
    ``_SHAPES`` (every call is kept: the work stays linear)."""
    found: dict[str, cst.FunctionDef] = {}
    for method in methods:
        found.setdefault(("static " if _static(method) else "") + cst.Module([]).code_for_node(method.params), method)
    return list(found.values()) if len(found) <= _SHAPES else []


def _static(function: cst.FunctionDef) -> bool:
    """A ``@staticmethod`` takes no ``self``: its first parameter is an argument."""
    return any(cstutil_code(d.decorator) == "staticmethod" for d in function.decorators)


def first_on_the_way(
    callers: Callers, here: Callable[[cst.CSTNode], T | None], budget: Budget, entries: Collection[cst.FunctionDef] = ()
) -> Callable[[cst.FunctionDef], T | None]:
    """For each function, the first answer ``here`` gives at one of its sites (in the order of
    ``sites``) or, where it gives none, on the way to that site's function, transitively: the
    innermost rank test or divergent decision a function runs under. Solved once per
    function; ``None`` when no caller has one (or the file shows no caller), and for the
    ``entries`` (spawn targets: their callers are another process)."""

    def frames(key: Key) -> list[Key]:
        return [] if key in entries else callers.frames(key)

    def entry(key: Key, at_entry: Callable[[Key], T | None]) -> T | None:
        if key in entries:
            return None
        if isinstance(key, cst.FunctionDef):
            name = callers.method_name(key)
            found = at_entry(name) if name is not None else None
            if found is not None:
                return found
        for site in callers.sites(key):
            found = here(site)
            if found is None:
                enclosing = callers.source.enclosing_function(site)
                found = at_entry(enclosing) if enclosing is not None else None
            if found is not None:
                return found
        return None

    return Fixpoint(frames, entry, None, budget)


CalleeKey = cst.FunctionDef | str  # a function, or a method name standing for every such method


class Callees:
    """The callee graph of one file, the other direction: what a call runs, by name as
    ``Source.functions_called`` matches it, with one node per method name (``x.get(...)`` may
    run every ``get``), so same-named methods cost edges linear in the program."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def of_call(self, call: cst.Call) -> list[CalleeKey]:
        """``f(...)``: the file's functions named ``f``; ``x.get(...)``: the name ``"get"``."""
        if isinstance(call.func, cst.Attribute):
            name = call.func.attr.value
            return [name] if self.methods(name) else []
        return list(self.source.functions_called(call))

    def methods(self, name: str) -> list[cst.FunctionDef]:
        return self._methods.get(name, [])

    def dependencies(self, key: CalleeKey) -> list[CalleeKey]:
        if isinstance(key, str):
            return list(self.methods(key))
        return [k for call in self.source.of_types_in(key, cst.Call) for k in self.of_call(call)]

    @functools.cached_property
    def _methods(self) -> dict[str, list[cst.FunctionDef]]:
        return {
            name: methods
            for name, functions in self.source.functions.items()
            if (methods := [f for f in functions if self.source.is_method(f)])
        }


def uncalled(callers: Callers, function: cst.FunctionDef) -> bool:
    """Nothing in the file runs ``function`` nor names it (no call, no mention, no other use of
    its name), and nothing outside the file's own code calls it implicitly: a module-level or
    nested function without decorators (glue-factory's ``trace_handler`` defined in ``training``
    and never handed to the profiler), or a ``@classmethod`` / ``@staticmethod`` of a
    module-level class (instance methods may be hooks a framework calls: ``forward``,
    ``__getitem__``)."""
    source = callers.source
    if function in source.spawned or callers.called(function):
        return False
    if source.enclosing_function(function) is not None and source.enclosing_class(function) is not None:
        return False  # a method of a class built inside a function
    names = source.names_by_value.get(function.name.value, [])
    if any(n is not function.name and not any(a is function for a in source.ancestors(n)) for n in names):
        return False  # named outside its own body: an alias, `hooks = [f]`
    decorators = {cstutil_code(d.decorator) for d in function.decorators}
    owner = source.enclosing_class(function)
    if owner is None:
        return not decorators
    return (
        source.enclosing_class(owner) is None
        and source.enclosing_function(owner) is None
        and decorators in ({"classmethod"}, {"staticmethod"})
    )
