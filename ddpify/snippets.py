"""Render the code snippets the converter inserts from ``templates/snippets.py.j2``.

Keeping every inserted line in one jinja2 template means the code users see in a converted
script is reviewed in one place, and the converter never builds source text by hand.
"""

from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from ddpify import templating


@functools.lru_cache(maxsize=1)
def _macros() -> Any:
    return templating.environment().get_template("snippets.py.j2").module


def render(name: str, **values: str) -> str:
    """The text of snippet ``name`` with ``values`` filled in."""
    return str(getattr(_macros(), name)(**values)).strip()


@functools.lru_cache(maxsize=512)
def _expression(name: str, items: tuple[tuple[str, str], ...]) -> cst.BaseExpression:
    return cst.parse_expression(render(name, **dict(items)))


@functools.lru_cache(maxsize=512)
def _statement(name: str, items: tuple[tuple[str, str], ...]) -> cst.BaseStatement:
    return cst.parse_statement(render(name, **dict(items)) + "\n")


def expression(name: str, **values: str) -> cst.BaseExpression:
    """Snippet ``name`` parsed as an expression (libcst nodes are immutable: caching is safe)."""
    return _expression(name, tuple(sorted(values.items())))


def statement(name: str, **values: str) -> cst.BaseStatement:
    """Snippet ``name`` parsed as one statement."""
    return _statement(name, tuple(sorted(values.items())))
