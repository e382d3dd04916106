"""Rank flags a project helper sets on the object it is handed: ``init_dist(opt)`` whose code
ends with ``opt.log = True`` on local rank 0 and ``opt.log = False`` elsewhere makes ``opt.log``
a rank test in the caller, though the caller never assigns it (HybrIK's ``if opt.log:`` around
its saves and its SummaryWriter)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.module_facts import through_calls
from ddpify.analysis.project import SetFlags
from ddpify.analysis.ranks import Ranks
from ddpify.tree.cstutil import code

if TYPE_CHECKING:
    from ddpify.analysis.source import Source

# ``RankTests.where`` and ``RankTests.combine``: where a statement runs; where values that each
# hold where their statement runs make the variable true
Where = Callable[[cst.CSTNode], Ranks]
Combine = Callable[[list[tuple[Ranks, "cst.BaseExpression | None"]]], "Ranks | None"]


def flag_setters(source: Source, where: Where, combine: Combine, functions: list[cst.FunctionDef]) -> dict[cst.FunctionDef, SetFlags]:
    """The rank flags each of ``functions`` sets on its parameters (``param.attr = <rank
    test>``), itself or through the module's functions and project helpers it hands them to;
    one answer per function."""
    attributes: dict[tuple[cst.FunctionDef, str], list[tuple[str, cst.CSTNode, cst.BaseExpression | None]]] = {}
    for target, bindings in source.assignments.items():
        base, dot, attribute = target.partition(".")
        if not dot or "." in attribute or not base.isidentifier():
            continue
        for statement, value in bindings:
            function = source.enclosing_function(statement)
            if function is not None:
                attributes.setdefault((function, base), []).append((attribute, statement, value))

    def answer(function: cst.FunctionDef, called: Callable[[cst.Call], SetFlags | None]) -> SetFlags | None:
        names = [p.name.value for p in function.params.params]
        found: dict[tuple[int, str], Ranks] = {}
        for index, name in enumerate(names):
            weighed: dict[str, list[tuple[Ranks, cst.BaseExpression | None]]] = {}
            for attribute, statement, value in attributes.get((function, name), []):
                weighed.setdefault(attribute, []).append((where(statement), value))
            for attribute, values in weighed.items():
                ranks = combine(values)
                if ranks is not None:
                    found[(index, attribute)] = ranks
        for call in source.of_types_in(function.body, cst.Call):
            for index, attribute, ranks in called(call) or ():
                argument = call.args[index].value if index < len(call.args) and call.args[index].keyword is None else None
                if isinstance(argument, cst.Name) and argument.value in names:
                    key = (names.index(argument.value), attribute)
                    found[key] = _either(found[key], ranks) if key in found else ranks
        return tuple((index, attribute, ranks) for (index, attribute), ranks in found.items()) or None

    return through_calls(source, functions, answer, lambda helper: helper.sets_flags or None)


def flags_set_by_calls(source: Source) -> dict[str, Ranks]:
    """The flags the file's calls of project helpers set on what they are handed, by the
    reference the file reads them through (``opt.log`` after ``init_dist(opt)``)."""
    found: dict[str, Ranks] = {}
    for calls in source.calls_by_callee.values():
        for call in calls:
            helper = source.project.helper(call)
            for index, attribute, ranks in helper.sets_flags if helper is not None else ():
                if index < len(call.args) and call.args[index].keyword is None:
                    key = f"{code(call.args[index].value)}.{attribute}"
                    found[key] = _either(found[key], ranks) if key in found else ranks
    return found


def _either(first: Ranks, second: Ranks) -> Ranks:
    """One of two values, not known which: true where either may be, surely only where both are."""
    return Ranks(first.may | second.may, first.must & second.must)


def cleared_later(
    source: Source, bindings: list[tuple[cst.CSTNode, cst.BaseExpression | None]], weighed: list[tuple[Ranks, cst.BaseExpression | None]]
) -> list[tuple[Ranks, cst.BaseExpression | None]]:
    """``weighed`` (each assignment's value with where it runs), where an assignment of
    ``False`` / ``None`` that follows others in the same function overrides them on the
    ranks where it surely runs: ``self._use_wandb = conf.use_wandb`` then, under ``if rank not
    in [0, -1]:``, ``self._use_wandb = False`` leaves the flag possibly true on rank 0 only."""
    cleared = [
        (statement, ranks.must)
        for (statement, value), (ranks, _) in zip(bindings, weighed, strict=True)
        if isinstance(value, cst.Name) and value.value in ("False", "None") and ranks.must
    ]
    if not cleared:
        return weighed
    found: list[tuple[Ranks, cst.BaseExpression | None]] = []
    for (statement, _), (ranks, value) in zip(bindings, weighed, strict=True):
        home, start = source.enclosing_function(statement), source.line(statement)
        for later, must in cleared:
            if later is not statement and source.enclosing_function(later) is home and source.line(later) > start:
                ranks = Ranks(ranks.may & ~must, ranks.must & ~must)
        found.append((ranks, value))
    return found


def class_flags(source: Source, where: Where, combine: Combine) -> dict[str, tuple[tuple[str, Ranks], ...]]:
    """The rank flags each top-level class's methods set on ``self`` (VL-T5's ``self.verbose =
    False`` under ``if args.gpu != 0:``), with those its project base classes set, by class name:
    a subclass in another file reads ``if self.verbose:`` as the rank test it is."""
    classes = [k for k in source.of_types(cst.ClassDef) if isinstance(k, cst.ClassDef) and source.enclosing_class(k) is None]
    bound: dict[cst.ClassDef, dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]]] = {k: {} for k in classes}
    for target, bindings in source.assignments.items():
        base, dot, attribute = target.partition(".")
        if base != "self" or not dot or "." in attribute:
            continue
        for statement, value in bindings:
            owner = source.enclosing_class(statement)
            if owner in bound:
                bound[owner].setdefault(attribute, []).append((statement, value))
    found: dict[str, tuple[tuple[str, Ranks], ...]] = {}
    for klass, attributes in bound.items():  # each binding weighed once: linear in the file
        own = {}
        for attribute, bindings in attributes.items():
            if not any(_may_be_flag(v, len(bindings)) for _, v in bindings):
                continue
            ranks = combine(cleared_later(source, bindings, [(where(s), v) for s, v in bindings]))
            if ranks is not None:
                own[attribute] = ranks
        inherited = {a: r for a, r in _base_flags(source, klass).items() if a not in attributes}
        if own or inherited:
            found[klass.name.value] = tuple(sorted({**inherited, **own}.items()))
    return found


# What a value that may make a rank flag looks like: a test, or a name that says rank or main.
_FLAG_LIKE = re.compile(r"rank|main|master|verbose|primary|distributed|gpu|local", re.I)


def _may_be_flag(value: cst.BaseExpression | None, bindings: int) -> bool:
    """A cheap sieve before weighing where each assignment runs: ``True`` / ``False`` set in
    several places, a comparison or boolean expression, or a value that names a rank."""
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return bindings > 1
    if isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)):
        return True
    return isinstance(value, (cst.Name, cst.Attribute, cst.Call)) and bool(_FLAG_LIKE.search(code(value)))


def inherited_flags(source: Source) -> dict[str, Ranks]:
    """``self.<attribute>`` flags this file's classes inherit from the project's base classes."""
    found: dict[str, Ranks] = {}
    for klass in source.of_types(cst.ClassDef):
        if isinstance(klass, cst.ClassDef) and source.enclosing_class(klass) is None:
            for attribute, ranks in _base_flags(source, klass).items():
                key = f"self.{attribute}"
                found[key] = _either(found[key], ranks) if key in found else ranks
    return found


def _base_flags(source: Source, klass: cst.ClassDef) -> dict[str, Ranks]:
    found: dict[str, Ranks] = {}
    for base in klass.bases:
        helper = source.project.named(f"{code(base.value)}.__init__") if isinstance(base.value, (cst.Name, cst.Attribute)) else None
        for attribute, ranks in helper.attribute_flags if helper is not None else ():
            found.setdefault(attribute, ranks)
    return found
