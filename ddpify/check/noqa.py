"""Suppression comments: ``# noqa: DDP005`` (ruff/flake8 style) and ``# ddpify: ignore[DDP005]``.

A bare ``# noqa`` / ``# ddpify: ignore`` silences every code. A comment anywhere on the lines
of the statement that holds the finding counts, so multi-line calls can carry it on any line.
"""

from __future__ import annotations

import io
import re
import tokenize

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+\d+(?:[\s,]+[A-Z]+\d+)*))?", re.I)
_DDPIFY = re.compile(r"#\s*ddpify:\s*ignore(?:\[(?P<codes>[A-Z]+\d+(?:[\s,]+[A-Z]+\d+)*)\])?", re.I)
ALL = frozenset({"*"})


def suppressions(source: str) -> dict[int, frozenset[str]]:
    """Line -> suppressed codes (``{"*"}`` for all) from the comments of ``source``."""
    found: dict[int, frozenset[str]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        codes = _codes(token.string)
        if codes is not None:
            found[token.start[0]] = found.get(token.start[0], frozenset()) | codes
    return found


def _codes(comment: str) -> frozenset[str] | None:
    for pattern in (_NOQA, _DDPIFY):
        match = pattern.search(comment)
        if match:
            listed = match.group("codes")
            return frozenset(re.split(r"[\s,]+", listed.upper().strip())) if listed else ALL
    return None


def is_suppressed(code: str, lines: range, table: dict[int, frozenset[str]]) -> bool:
    for line in lines:
        codes = table.get(line)
        if codes and ("*" in codes or code in codes):
            return True
    return False
