"""Arguments the converter adds to a call (``per_process_batch=True``, ``exist_ok=True``,
``map_location=...``) are laid out as the call's own: on a line of their own when those are,
after ``, `` on one line, with the line break or trailing comma that ended the arguments kept
at the end."""

from __future__ import annotations

import libcst as cst
import pytest

from ddpify.convert.rewrites import appended, keyword


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("f(a, b)", "f(a, b, c=1)"),
        ("f()", "f(c=1)"),
        ("f(a, b,)", "f(a, b, c=1,)"),
        ("f(\n    a,\n    b,\n)", "f(\n    a,\n    b,\n    c=1,\n)"),
        ("f(a,\n    b\n)", "f(a,\n    b,\n    c=1\n)"),
        ("f(a,\n  b, x\n)", "f(a,\n  b, x, c=1\n)"),
        ("f(\n    a, b)", "f(\n    a, b, c=1)"),
    ],
)
def test_an_added_argument_follows_the_last_one_on_its_line(call: str, expected: str) -> None:
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)
    rewritten = node.with_changes(args=appended(node, keyword("c", cst.Integer("1"))))
    assert cst.Module([]).code_for_node(rewritten) == expected
