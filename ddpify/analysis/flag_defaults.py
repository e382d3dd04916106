"""Rank helpers with a mode parameter (open_clip's ``def is_master(args, local=False): return
is_local_master(args) if local else is_global_master(args)``): what such a function returns
for a call that leaves the parameter at its literal default. A branch (an ``if`` or a
conditional expression) decided by such a parameter is taken as the default takes it; a call
that passes the parameter gets no answer from that reading, since which branch it takes is the
call's."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.source import Source

# a parameter's name -> (its position, the truth of its literal default)
Defaults = dict[str, tuple[int, bool]]
# the parameters a reading took at their default: (position, name)
Reads = frozenset[tuple[int, str]]

_LITERALS = {"True": True, "False": False, "None": False}


def literal_defaults(function: cst.FunctionDef, *, method: bool) -> Defaults:
    """The parameters of ``function`` whose default is ``True``, ``False`` or ``None``, at
    their position in a call (a method's ``self`` is not passed)."""
    params = function.params
    positional = [*params.posonly_params, *params.params][1 if method else 0 :]
    found: Defaults = {}
    for index, param in [*enumerate(positional), *((len(positional) + 1000, p) for p in params.kwonly_params)]:
        if isinstance(param.default, cst.Name) and param.default.value in _LITERALS:
            found[param.name.value] = (index, _LITERALS[param.default.value])
    return found


def by_default(value: cst.BaseExpression, defaults: Defaults, used: set[tuple[int, str]]) -> cst.BaseExpression:
    """``A if local else B`` -> ``B`` when ``local`` defaults to False (``used`` records it)."""
    while isinstance(value, cst.IfExp) and (decided := _decided(value.test, defaults)) is not None:
        name, truth = decided
        used.add((defaults[name][0], name))
        value = value.body if truth else value.orelse
    return value


def skipped_by_default(
    source: Source, node: cst.CSTNode, function: cst.FunctionDef, defaults: Defaults, used: set[tuple[int, str]]
) -> bool:
    """``node`` sits in a branch of an ``if`` on such a parameter that its default does not take."""
    child: cst.CSTNode = node
    for ancestor in source.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If) and (decided := _decided(ancestor.test, defaults)) is not None:
            name, truth = decided
            used.add((defaults[name][0], name))
            if (child is ancestor.body) is not truth:
                return True
        child = ancestor
    return False


def passes(call: cst.Call, reads: Reads) -> bool:
    """``call`` gives one of the parameters a reading took at its default."""
    given = {a.keyword.value for a in call.args if a.keyword is not None}
    positional = sum(1 for a in call.args if a.keyword is None and not a.star)
    starred = any(a.star for a in call.args)
    return any(name in given or index < positional or starred for index, name in reads)


def _decided(test: cst.BaseExpression, defaults: Defaults) -> tuple[str, bool] | None:
    """(parameter, the truth of ``test`` at its default) for ``local`` / ``not local``."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if isinstance(test, cst.UnaryOperation) and negated else test
    if isinstance(inner, cst.Name) and inner.value in defaults:
        return inner.value, defaults[inner.value][1] is not negated
    return None
