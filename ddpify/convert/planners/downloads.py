"""Statements that download data (``download=True``, ``.from_pretrained(...)``): every rank
would fetch into the same folder at once, so rank 0 goes first (``Facts.downloads``).

``ddpify.main_process_first()`` orders the ranks with barriers, so it needs the process group:
a download that runs at import time (module-level code outside the ``__main__`` block, or a
function called from there) comes before ``with ddpify.distributed():`` sets the group up, and
would order nothing. The group is then set up right after the imports (``Facts.setup_after``;
``ddpify.setup()`` is idempotent, so the ``__main__`` block's ``distributed()`` reuses it).
A download under a decision the ranks may take differently (``ddpify.analysis.divergence``)
gets no barriers at all: it is reported."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import collectives
from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.bootstrap import set_up_after_imports
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code


def plan(recording: Recording, facts: Facts) -> None:
    early: list[cst.SimpleStatementLine] = []
    for call in recording.download_calls:
        statement = _download_statement(recording, call)
        if statement is None:
            continue
        divergent = recording.analysis.context.divergent_condition(statement)
        if divergent is not None:
            facts.manual.append(collectives.download_item(recording.line(statement), divergent))
            continue
        facts.downloads.add(statement)
        if facts.main_guard is not None and not recording.bootstrapped and recording.analysis.context.at_import_time(statement):
            early.append(statement)
    if early:
        numbers = [str(recording.line(s)) for s in early]
        lines = f"line {numbers[0]}" if len(numbers) == 1 else f"lines {', '.join(numbers[:-1])} and {numbers[-1]}"
        set_up_after_imports(
            recording,
            facts,
            early[0],
            f"the download at {lines} runs at import time, and rank 0 must go first there",
            f"the download at {lines} runs when the module is imported, before the __main__ block sets the process "
            "group up, so ddpify.main_process_first() orders nothing there: every rank downloads at once",
        )


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
