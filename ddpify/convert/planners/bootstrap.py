"""Where the process group is set up: ``ddpify.distributed()`` around the ``if __name__ ==
"__main__":`` body (``Facts.main_guard``), else ``ddpify.setup()`` after the import prologue
(``Facts.setup_after``; also with a main guard when code before it needs the group, see
``downloads.plan``); neither where the script bootstraps already. Also whether the script is
converted already."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.findings import Change, ManualItem
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


def plan_import_time_wraps(recording: Recording, facts: Facts) -> None:
    """A model wrapped by module-level code outside the ``__main__`` block (built at import time,
    trained by a function the block calls) is wrapped before ``ddpify.distributed()`` sets the
    group up: ``prepare_model`` would find no group and return the plain model, and training
    would average nothing. The group is then set up right after the imports as well."""
    if facts.main_guard is None or facts.setup_after is not None:
        return
    body = list(recording.module.body)
    early = [(anchor, where) for _, anchor, where in facts.model_wraps if anchor in body]  # module level: runs at import
    if early:
        anchor, where = early[0]
        at = f"{where} line {recording.line(anchor)}"
        set_up_after_imports(
            recording,
            facts,
            anchor,
            f"the model is wrapped at import time ({at}), before the __main__ block runs",
            f"the model is wrapped {at}, when the module is imported, before the __main__ block sets the "
            "process group up: ddpify.prepare_model finds no group there and returns the plain model",
        )


def set_up_after_imports(recording: Recording, facts: Facts, first: cst.CSTNode, because: str, no_imports: str) -> None:
    """``ddpify.setup()`` after the import prologue, because of code at ``first`` that runs at
    import time and needs the group; with no import prologue to put it after, a report."""
    anchor = last_prologue_import(recording)
    if anchor is None:
        facts.manual.append(ManualItem(recording.line(first), no_imports, "call ddpify.setup() at the top of the file, before this code"))
        return
    facts.setup_after = anchor
    facts.changes.append(
        Change(recording.line(first), f"the process group is set up after the imports, not only in the __main__ block: {because}")
    )


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
