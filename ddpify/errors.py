"""Errors that end a run with a documented exit code and a one-line message."""

from __future__ import annotations

import ast
import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import libcst as cst

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3  # a ddpify bug: the rewrite produced code that does not parse; nothing written


class DdpifyError(Exception):
    """Bad input or usage: the CLI prints ``ddpify: error: <message>`` and exits 2."""

    exit_code = EXIT_BAD_INPUT


class InternalError(DdpifyError):
    """The converter produced invalid code. Never written anywhere; please report it."""

    exit_code = EXIT_INTERNAL


def reader_left() -> NoReturn:
    """``ddpify ... | head``: the reader closed the pipe, which is no error of ours. Later writes
    go nowhere (so Python's exit flush raises nothing) and the exit code is 1, as for SIGPIPE."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)


def compiles(source: str, filename: str) -> bool:
    """CPython's own parser accepts ``source`` (20x faster than building a libcst tree)."""
    try:
        compile(source, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def syntax_error(source: str, filename: str, exc: cst.ParserSyntaxError) -> DdpifyError:
    """``file:line:col: syntax error: ...`` where CPython puts it (libcst reports the token
    after the error, often the next line); libcst's own position when CPython accepts it.
    Shared by convert and check, so both name the same place."""
    try:
        ast.parse(source, filename)
    except SyntaxError as python:
        if python.lineno:
            return DdpifyError(f"{filename}:{python.lineno}:{python.offset or 1}: syntax error: {python.msg}")
    except (ValueError, RecursionError, MemoryError):
        pass
    return DdpifyError(f"{filename}:{exc.raw_line}:{exc.raw_column + 1}: syntax error: {exc.message}")
