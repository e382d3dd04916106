"""Continuation lines aligned with a call's opening bracket follow the bracket when a rewrite
renames the callee (``DataLoader(`` → ``ddpify.distributed_loader(``).

libcst keeps each line break's whitespace as it was, so without this the arguments would stay
under the old bracket. Only a visually aligned call moves (its first argument on the bracket's
line, every argument that starts a line in that argument's column); a hanging indent does not
depend on the callee's length and stays as it is. Every line break inside the call moves by
the same amount, so nested brackets keep their layout relative to it.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from libcst.metadata import CodeRange

from ddpify.tree.cstutil import code

Positions = Callable[[cst.CSTNode], "CodeRange | None"]


def follow_bracket(original: cst.Call, rewritten: cst.BaseExpression, position: Positions) -> cst.BaseExpression:
    """``rewritten`` (what became of ``original``) with its continuation lines moved by the
    change in the callee's length, when ``original`` was aligned with its bracket."""
    if not isinstance(rewritten, cst.Call):
        return rewritten
    shift = len(code(rewritten.func)) - len(code(original.func))
    if shift == 0 or not _aligned(original, position):
        return rewritten
    moved = rewritten.visit(_Shift(shift))
    assert isinstance(moved, cst.Call)
    return moved


def _aligned(call: cst.Call, position: Positions) -> bool:
    bracket = position(call.func)
    first = position(call.args[0]) if call.args else None
    if bracket is None or first is None or first.start.line != bracket.end.line:  # no arguments, or a hanging indent
        return False
    columns = [column for arg, after in zip(call.args, (*call.args[1:], None), strict=True) for column in _breaks(arg, after, position)]
    return bool(columns) and all(column == first.start.column for column in columns)


def _breaks(arg: cst.Arg, after: cst.Arg | None, position: Positions) -> list[int | None]:
    """The columns of the lines that start inside ``arg`` at the call's level (the parts of
    an implicitly concatenated string) or with the next argument (``after``)."""
    found: list[int | None] = []
    value = arg.value
    while isinstance(value, cst.ConcatenatedString):
        if isinstance(value.whitespace_between, cst.ParenthesizedWhitespace):
            right = position(value.right)
            found.append(right.start.column if right is not None else None)
        value = value.right
    if after is not None and isinstance(arg.comma, cst.Comma) and isinstance(arg.comma.whitespace_after, cst.ParenthesizedWhitespace):
        start = position(after)
        found.append(start.start.column if start is not None else None)
    return found


class _Shift(cst.CSTTransformer):
    """Every line break's indentation (spaces only) moved ``by`` columns."""

    def __init__(self, by: int) -> None:
        super().__init__()
        self.by = by

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        spaces = updated_node.last_line.value
        if spaces.strip(" ") or len(spaces) + self.by < 0:
            return updated_node
        return updated_node.with_changes(last_line=cst.SimpleWhitespace(" " * (len(spaces) + self.by)))
