"""Where the process group is set up: after the import prologue (``Facts.setup_after``), and
``ddpify.distributed()`` around the ``if __name__ == "__main__":`` body (``Facts.main_guard``);
neither where the script bootstraps already. Also whether the script is converted already."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import single_statement


def plan(recording: Recording, facts: Facts) -> None:
    facts.already_converted = recording.imports_runtime
    if recording.bootstrapped:  # ddpify.setup() / ddpify.distributed() is there: no second one
        return
    last_import: cst.CSTNode | None = None
    in_prefix = True
    for statement in recording.module.body:
        if _is_main_guard(statement):
            facts.main_guard = statement  # type: ignore[assignment]
        if not in_prefix:
            continue
        if single_statement(statement, cst.Import, cst.ImportFrom):
            last_import = statement
        elif last_import is not None or not _is_docstring(statement):
            in_prefix = last_import is None
    facts.setup_after = last_import


def _is_docstring(line: cst.CSTNode) -> bool:
    return (
        isinstance(line, cst.SimpleStatementLine)
        and single_statement(line, cst.Expr)
        and isinstance(cst.ensure_type(line.body[0], cst.Expr).value, cst.SimpleString)
    )


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
