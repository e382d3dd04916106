"""Render the code snippets the converter inserts from ``templates/snippets.py.j2``.

Keeping every inserted line in one jinja2 template means the code users see in a converted
script is reviewed in one place, and the converter never builds source text by hand.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
import libcst as cst

_PACKAGE_DIR = Path(__file__).resolve().parent
# Installed wheels carry the templates inside the package; a source checkout keeps them at the
# repository root. FileSystemLoader skips whichever of the two does not exist.
_SEARCH_PATH = [str(_PACKAGE_DIR / "templates"), str(_PACKAGE_DIR.parent / "templates")]


@functools.lru_cache(maxsize=1)
def _macros() -> Any:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_SEARCH_PATH),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template("snippets.py.j2").module


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
