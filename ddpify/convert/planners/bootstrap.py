"""Where the process group is set up: ``ddpify.distributed()`` around the ``if __name__ ==
"__main__":`` body (``Facts.main_guard``), else ``ddpify.setup()`` after the import prologue
(``Facts.setup_after``; also with a main guard when code before it needs the group, see
``downloads.plan``); neither where the script bootstraps already. Also whether the script is
converted already."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import single_statement


def plan(recording: Recording, facts: Facts) -> None:
    facts.already_converted = recording.imports_runtime
    if recording.bootstrapped:  # ddpify.setup() / ddpify.distributed() is there: no second one
        return
    for statement in recording.module.body:
        if _is_main_guard(statement):
            facts.main_guard = statement  # type: ignore[assignment]
    if facts.main_guard is None:  # with a main guard, only code that runs before it needs this (downloads.plan)
        facts.setup_after = last_prologue_import(recording)


def last_prologue_import(recording: Recording) -> cst.CSTNode | None:
    """The last import of the first run of imports (statements before it, a docstring or
    ``sys.path`` edits, are skipped): where ``ddpify.setup()`` goes, so that the code after it
    runs inside the process group."""
    last_import: cst.CSTNode | None = None
    for statement in recording.module.body:
        if single_statement(statement, cst.Import, cst.ImportFrom):
            last_import = statement
        elif last_import is not None:
            break
    return last_import


def _is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (any string on the right, as written)."""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    return (
        isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
    )
