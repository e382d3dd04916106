"""Least fixpoints over a graph, one value per node, each computed once.

The analyses that follow calls (where a function runs, what it iterates, whether it trains)
give each function a value computed from the values of the functions it depends on (its
callers, or its callees). Recursion makes that a system of equations; walking it anew for
every question re-walks every path through a cycle, exponentially often in shapes that real
libraries have (same-named methods of many classes calling each other). ``Fixpoint`` solves the
system instead: on the first question it finds the strongly connected components of the part
of the graph the question reaches (Tarjan, iteratively), solves them dependencies first, and
inside a component re-evaluates a node only when a value it read has grown. With a finite
lattice of height h, the work is O(h * (nodes + edges)) for the whole file, however many
questions follow.

A ``Budget`` bounds the work of every solver of one file together: past it, ``Exhausted`` is
raised and the caller degrades to its conservative answer (``ddpify.analysis.budget``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

from ddpify.analysis.budget import Budget

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Fixpoint(Generic[K, V]):
    """The least solution of ``value(k) = transfer(k, value)`` over ``dependencies``.

    ``transfer(key, get)`` must read other keys' values only through ``get`` and only for keys
    ``dependencies(key)`` lists, and must be monotone in them; ``bottom`` is where every value
    starts. Values are compared with ``==``.
    """

    def __init__(
        self,
        dependencies: Callable[[K], Iterable[K]],
        transfer: Callable[[K, Callable[[K], V]], V],
        bottom: V,
        budget: Budget | None = None,
    ) -> None:
        self._dependencies = dependencies
        self._transfer = transfer
        self._bottom = bottom
        self._budget = budget or Budget()
        self._solved: dict[K, V] = {}

    def __call__(self, key: K) -> V:
        found = self._solved.get(key, self)
        if found is self:
            self._solve_from(key)
            return self._solved[key]
        return found  # type: ignore[return-value]

    # ---------------------------------------------------------------- Tarjan, iteratively
    def _solve_from(self, root: K) -> None:
        index: dict[K, int] = {}
        low: dict[K, int] = {}
        stack: list[K] = []
        on_stack: set[K] = set()
        edges: dict[K, list[K]] = {}
        work: list[tuple[K, int]] = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
                edges[node] = [d for d in dict.fromkeys(self._dependencies(node)) if d not in self._solved]
                self._budget.spend(1 + len(edges[node]))
            children = edges[node]
            if position < len(children):
                work.append((node, position + 1))
                child = children[position]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            for child in children:
                if child in on_stack and index[child] > index[node]:
                    low[node] = min(low[node], low[child])
            if low[node] == index[node]:
                component: list[K] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member is node or member == node:
                        break
                self._solve_component(component, edges)

    def _solve_component(self, component: list[K], edges: dict[K, list[K]]) -> None:
        members = set(component)
        if len(component) == 1 and component[0] not in edges[component[0]]:
            key = component[0]
            self._budget.spend(1)
            self._solved[key] = self._transfer(key, self._read)
            return
        dependents: dict[K, list[K]] = {k: [] for k in component}
        for key in component:
            for dependency in edges[key]:
                if dependency in members:
                    dependents[dependency].append(key)
        values: dict[K, V] = dict.fromkeys(component, self._bottom)

        def read(key: K) -> V:
            return values[key] if key in members else self._read(key)

        queue = list(reversed(component))  # dependencies first: Tarjan pops them last
        queued = set(queue)
        while queue:
            key = queue.pop()
            queued.discard(key)
            self._budget.spend(1)
            value = self._transfer(key, read)
            if value != values[key]:
                values[key] = value
                for dependent in dependents[key]:
                    if dependent not in queued:
                        queued.add(dependent)
                        queue.append(dependent)
        self._solved.update(values)

    def _read(self, key: K) -> V:
        found = self._solved.get(key, self)
        if found is self:  # a dependency the transfer did not declare: solve it on its own
            self._solve_from(key)
            return self._solved[key]
        return found  # type: ignore[return-value]
