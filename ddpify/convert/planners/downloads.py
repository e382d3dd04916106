"""Statements that download data (``download=True``, ``.from_pretrained(...)``): every rank
would fetch into the same folder at once, so rank 0 goes first (``Facts.downloads``)."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code


def plan(recording: Recording, facts: Facts) -> None:
    for call in recording.download_calls:
        statement = _download_statement(recording, call)
        if statement is not None:
            facts.downloads.add(statement)


def _download_statement(recording: Recording, call: cst.Call) -> cst.SimpleStatementLine | None:
    """The statement holding ``call``; None inside ``with ...main_process_first...:`` (the
    script orders the ranks itself)."""
    statement: cst.CSTNode | None = None
    for ancestor in recording.ancestors(call):
        if isinstance(ancestor, cst.With) and "main_process_first" in code(ancestor.items[0]):
            return None
        if isinstance(ancestor, cst.SimpleStatementLine) and statement is None:
            statement = ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            break
    return statement if isinstance(statement, cst.SimpleStatementLine) else None
