"""One fact per function of a module, where a function's answer may come from the calls it
makes: of the module's own functions (answered the same way, each once) or of the project's
helpers (``Helper``, read from their summaries). Shared by the summaries of what a helper
does (the collective it runs, the console logger it returns)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

if TYPE_CHECKING:
    from ddpify.analysis.project import Helper
    from ddpify.analysis.source import Source

T = TypeVar("T")
Called = Callable[[cst.Call], "T | None"]


def through_calls(
    source: Source,
    functions: list[cst.FunctionDef],
    answer: Callable[[cst.FunctionDef, Callable[[cst.Call], T | None]], T | None],
    of_helper: Callable[[Helper], T | None],
    of_call: Callable[[cst.Call], T | None] = lambda call: None,
) -> dict[cst.FunctionDef, T]:
    """``answer(function, called)`` for each of ``functions`` that has one; ``called(call)``
    answers for a call in it: ``of_call`` first (a library call), then the project helper it
    runs, then the module's own function. Each function is answered once, after the module's
    functions it calls (an iterative walk: a chain of thousands of calls needs no deep stack);
    a recursive call gets no answer."""
    answers: dict[cst.FunctionDef, T | None] = {}
    owned: dict[cst.Call, cst.FunctionDef | None] = {}

    def own(call: cst.Call) -> cst.FunctionDef | None:
        """The module's function ``call`` runs: called by its name (``x.run()`` is a method, and
        asking every method of that name would cost a pass over them per call), asked once."""
        if call not in owned:
            found = (
                [f for f in source.functions_called(call) if source.enclosing_class(f) is None] if isinstance(call.func, cst.Name) else []
            )
            owned[call] = found[0] if len(found) == 1 else None
        return owned[call]

    def called(call: cst.Call) -> T | None:
        found = of_call(call)
        if found is not None:
            return found
        helper = source.project.helper(call)
        if helper is not None:
            return of_helper(helper)
        function = own(call)
        return answers.get(function) if function is not None else None

    for function in _callees_first(source, functions, own):
        answers[function] = None  # recursion: no answer on this path
        answers[function] = answer(function, called)
    return {f: found for f in functions if (found := answers.get(f)) is not None}


def _callees_first(
    source: Source, roots: list[cst.FunctionDef], own: Callable[[cst.Call], cst.FunctionDef | None]
) -> list[cst.FunctionDef]:
    """``roots`` and the module's functions they call, each after those it calls (a depth-first
    post-order kept on an explicit stack)."""
    order: list[cst.FunctionDef] = []
    seen: set[cst.FunctionDef] = set()

    def callees(function: cst.FunctionDef) -> list[cst.FunctionDef]:
        return [f for c in source.of_types_in(function, cst.Call) if (f := own(c)) is not None]

    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(callees(root)))]
        while stack:
            function, pending = stack[-1]
            following = next((f for f in pending if f not in seen), None)
            if following is None:
                stack.pop()
                order.append(function)
            else:
                seen.add(following)
                stack.append((following, iter(callees(following))))
    return order
