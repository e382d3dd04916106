"""Decorators that run the function they wrap on some ranks only: ``@rank_zero_only``,
``@master_only`` (mmcv, or the project's own), ``@accelerator.on_main_process``.

A decorator of this file or of the project is read: where its code calls the function it was
handed (``if get_rank() == 0: return func(*args)`` in the wrapper it returns) is where the
decorated function runs. A decorator the reading cannot see is known by its qualified name,
then by its name (``ddpify.analysis.ranks.API_DECORATORS`` / ``NAMED_DECORATORS``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.ranks import API_DECORATORS, EVERY, FLAGS, NAMED_DECORATORS, NOWHERE, Ranks, last_name
from ddpify.tree.cstutil import code, is_simple_reference

if TYPE_CHECKING:
    from ddpify.analysis.source import Source


def decorator_ranks(source: Source, local: Callable[[cst.CSTNode], Ranks], decorator: cst.FunctionDef) -> Ranks | None:
    """Where a decorator defined as ``decorator`` lets the function it wraps run: wherever its
    code (and the wrapper it nests) calls that function; None when that is every rank, or
    when it never calls it by its parameter's name. ``local``: where a node runs as far as
    its own function says (``Context.local``)."""
    params = decorator.params.params
    if not params:
        return None
    handed = params[0].name.value
    found = NOWHERE
    for call in source.of_types_in(decorator.body, cst.Call):
        if not (isinstance(call.func, cst.Name) and call.func.value == handed):
            continue
        where = local(call)
        inner = source.enclosing_function(call)
        while inner is not None and inner is not decorator:
            where = where & local(inner)
            inner = source.enclosing_function(inner)
        found = found | where
    return found if found.may and found.depends_on_process else None


def decorated_ranks(source: Source, own: Callable[[cst.FunctionDef], Ranks | None], function: cst.FunctionDef) -> Ranks:
    """Where the decorators of ``function`` let its body run (every rank without one);
    ``own``: ``decorator_ranks`` of a decorator of this file, cached by the caller."""
    found = EVERY
    for decorator in function.decorators:
        ranks = _ranks_of(source, own, decorator.decorator)
        if ranks is not None:
            found = found & ranks
    return found


def _ranks_of(source: Source, own: Callable[[cst.FunctionDef], Ranks | None], expression: cst.BaseExpression) -> Ranks | None:
    if not is_simple_reference(expression):
        return None
    if isinstance(expression, cst.Name):
        defined = [
            f for f in source.functions.get(expression.value, []) if source.enclosing_function(f) is None and not source.is_method(f)
        ]
        if len(defined) == 1:
            return own(defined[0])
    helper = source.project.named(code(expression))
    if helper is not None:
        return helper.decorates
    for qualified in source.qualified(expression):
        if qualified in API_DECORATORS:
            return FLAGS[API_DECORATORS[qualified]]
    name = last_name(expression) or ""
    return next((FLAGS[flag] for pattern, flag in NAMED_DECORATORS if pattern.match(name)), None)
