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
    runs, then the module's own function (each function answered once; a recursive call
    gets no answer on its way)."""
    answers: dict[cst.FunctionDef, T | None] = {}

    def called(call: cst.Call) -> T | None:
        found = of_call(call)
        if found is not None:
            return found
        helper = source.project.helper(call)
        if helper is not None:
            return of_helper(helper)
        own = [f for f in source.functions_called(call) if source.enclosing_class(f) is None]
        return of(own[0]) if len(own) == 1 else None

    def of(function: cst.FunctionDef) -> T | None:
        if function not in answers:
            answers[function] = None  # recursion: no answer on this path
            answers[function] = answer(function, called)
        return answers[function]

    return {f: found for f in functions if (found := of(f)) is not None}
