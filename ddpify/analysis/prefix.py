"""Code that strips or tolerates the DDP wrapper's ``module.`` key prefix itself: a string that
names it (``k.replace("module.", "")``), a ``[7:]`` slice, or a helper such as
``consume_prefix_in_state_dict_if_present``. One definition for the linter's checkpoint pairing
and the project helpers' summaries."""

from __future__ import annotations

import re

import libcst as cst

from ddpify.tree.cstutil import code, of_types

PREFIX_STRING = re.compile(r"^module\.?$|^module\.")
PREFIX_HELPER = re.compile(r"consume_prefix|strip_prefix|remove_prefix|unwrap|removeprefix", re.I)


def names_prefix(tree: cst.CSTNode) -> bool:
    """``tree`` names the prefix (a string) or calls a helper that strips it."""
    strings: list = of_types(tree, cst.SimpleString)
    calls: list = of_types(tree, cst.Call)
    return any(PREFIX_STRING.search(str(s.evaluated_value)) for s in strings) or any(PREFIX_HELPER.search(code(c.func)) for c in calls)


def strips_prefix(node: cst.CSTNode) -> bool:
    """A comprehension that drops the wrapper's prefix: names ``"module."`` or slices ``[7:]``."""
    if any(PREFIX_STRING.search(str(s.evaluated_value)) for s in of_types(node, cst.SimpleString)):
        return True
    return any(isinstance(s.lower, cst.Integer) and s.lower.value == "7" for s in of_types(node, cst.Slice))
