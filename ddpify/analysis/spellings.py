"""How an expression that holds a value is written: the spelling a report uses for it
(``loaders["train"]``) and the literal key of a subscript, shared by the flow of values
(``ddpify.analysis.values``) and the rank tests that read ``os.environ["RANK"]``."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.callgraph import literal


def spelling(node: cst.CSTNode) -> str | None:
    """How a report names a held value: ``model``, ``self.model``, ``loaders["train"]``,
    ``nets[0]``; None for other expressions."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = spelling(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    if isinstance(node, cst.Subscript):
        base = spelling(node.value)
        key = subscript_key(node)
        if base is None or key is None:
            return None
        return f'{base}["{key}"]' if isinstance(key, str) else f"{base}[{key}]"
    return None


def subscript_index(node: cst.Subscript) -> cst.BaseExpression | None:
    """``x`` of ``d[x]`` (one plain index), None for slices and several indices."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return node.slice[0].slice.value


def subscript_key(node: cst.Subscript) -> str | int | None:
    """The literal key of ``d["train"]`` / ``nets[0]``; None when it is not a literal."""
    index = subscript_index(node)
    return literal(index) if index is not None else None
