"""``through_calls`` answers each function of a module after the module's functions it calls,
with an explicit stack: a project module whose functions call each other in a chain of
thousands (generated code, a long dispatch) is summarised, not stopped by Python's recursion
limit, and the answer of the last function reaches the first."""

from __future__ import annotations

import sys

import libcst as cst

from ddpify.analysis import Analysis
from ddpify.analysis.module_facts import through_calls
from ddpify.tree.metadata import FastMetadata


def test_a_chain_longer_than_the_recursion_limit_is_answered() -> None:
    n = sys.getrecursionlimit() + 500
    text = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n\n\n" for i in range(n)) + f"def f{n}(x):\n    return marker(x)\n"
    source = Analysis(FastMetadata(cst.parse_module(text)), None).source
    functions = [f for fs in source.functions.values() for f in fs]

    def answer(function: cst.FunctionDef, called: object) -> bool | None:
        calls = source.of_types_in(function, cst.Call)
        if any(isinstance(c.func, cst.Name) and c.func.value == "marker" for c in calls):
            return True
        return next((True for c in calls if called(c)), None)  # type: ignore[operator]

    answers = through_calls(source, functions, answer, lambda helper: None)
    assert len(answers) == n + 1  # f0 included: the marker's answer went up the whole chain
