"""Rank flags handed in as arguments: ``def do_evaluation(model, loader, pbar=True)`` whose every
call in the file passes ``pbar=(rank == 0)`` makes ``tqdm(..., disable=not pbar)`` a rank-0-only
bar. What a parameter holds is what its calls pass (its default where a call passes nothing);
``RankTests`` weighs those values by where each call runs, as it does a variable's assignments.
A function this file never calls is called by the project's files that import it
(retinanet-examples: ``train.train(..., verbose=(rank == 0))`` in main.py, ``if verbose: print``
in train.py): their calls are read there (``Project.passed_elsewhere``)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddpify.analysis import project_files
from ddpify.analysis.ranks import EVERY, NOWHERE, Ranks, weighed
from ddpify.analysis.source import Source

# Parameters a flag is followed through, each handed on by a call of the next: deeper chains
# are generated code (a ring of 200 ``run`` methods each passing its parameter on to every
# other ``.run(``), and following them blew Python's stack; there the parameter is no flag.
HANDED_ON = 12


def passed_flag(
    source: Source,
    name: cst.BaseExpression,
    where: Callable[[cst.CSTNode], Ranks],
    combine: Callable[[list[tuple[Ranks, cst.BaseExpression | None]]], Ranks | None],
    busy: set[object],
    ranks: Callable[[cst.BaseExpression], Ranks],
) -> Ranks | None:
    """Where the parameter ``name`` is true: the values its calls pass (``passed_values``),
    weighed by where each call runs (``RankTests.combine``); ``busy`` guards recursion (a
    function passing its own parameter on to itself). None for anything but a plain name."""
    if not isinstance(name, cst.Name):
        return None
    key = ("parameter", name.value, source.enclosing_function(name))
    if key in busy or sum(isinstance(k, tuple) and k[0] == "parameter" for k in busy) >= HANDED_ON:
        return None
    busy.add(key)
    try:
        passed = passed_values(source, name)
        if passed is None:
            return None
        if passed:
            return combine([(where(call), value) for call, value in passed])
        return _passed_elsewhere(source, name, ranks)
    finally:
        busy.discard(key)


def _passed_elsewhere(source: Source, name: cst.Name, ranks: Callable[[cst.BaseExpression], Ranks]) -> Ranks | None:
    """Where the parameter is true by the calls of the project's importing files, weighed as
    ``RankTests.combine`` weighs values: None unless one is a rank test, or a constant passed
    where only some processes call."""
    if source.project.depth < project_files.DEPTH:
        return None  # a module summarised for a file importing it: that file's calls are read there, per call
    function = source.enclosing_function(name)
    assert function is not None  # passed_values found it a parameter
    if source.mentions_of(function):
        return None  # handed over here (``mp.spawn(train, args=(..., True))``): its arguments are set here
    method = source.is_method(function)
    params = function.params
    positional = [*params.posonly_params, *params.params][1 if method else 0 :]
    param = next(p for p in [*positional, *params.kwonly_params] if p.name.value == name.value)
    index = positional.index(param) if param in positional else -1
    owner = source.enclosing_class(function)
    callee = owner.name.value if owner is not None and function.name.value == "__init__" else function.name.value
    if callee in source.calls_by_callee and callee != function.name.value:
        return None  # the file builds the class itself: its own calls are the ones to read
    elsewhere = source.project.passed_elsewhere(callee, name.value, index, truth=True)
    if not elsewhere:
        return None
    values: list[tuple[Ranks, Ranks]] = []
    for context, value in elsewhere:
        if value is None and param.default is None:
            return None  # an argument missing without a default: a call this reading gets wrong
        values.append((context, value if value is not None else ranks(param.default)))  # type: ignore[arg-type]
    fixed = (EVERY, NOWHERE)
    if not any(v.depends_on_process or (v in fixed and c.depends_on_process) for c, v in values):
        return None
    return weighed(values)


def passed_values(source: Source, name: cst.Name) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    """Each call of the function whose parameter ``name`` reads, with the value the call gives
    it (the parameter's default where it gives none); empty when no call of this file calls it.
    None when ``name`` is no parameter there, the function rebinds it, or a call cannot be read
    (``*args``, ``**kwargs``, a missing argument without a default)."""
    function = source.enclosing_function(name)
    if function is None:
        return None
    params = function.params
    positional = [*params.posonly_params, *params.params][1 if source.is_method(function) else 0 :]
    param = next((p for p in [*positional, *params.kwonly_params] if p.name.value == name.value), None)
    if param is None or any(source.enclosing_function(s) is function for s, _ in source.assignments.get(name.value, [])):
        return None
    index = positional.index(param) if param in positional else None
    calls = source.call_sites(function)
    found: list[tuple[cst.Call, cst.BaseExpression]] = []
    for call in calls:
        if any(a.star for a in call.args):
            return None
        keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name.value), None)
        plain = [a.value for a in call.args if a.keyword is None]
        value = keyword if keyword is not None else plain[index] if index is not None and index < len(plain) else param.default
        if value is None:
            return None
        found.append((call, value))
    return found
