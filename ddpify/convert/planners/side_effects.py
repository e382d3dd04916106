"""Per-rank side effects beyond checkpoints and prints: image, figure, ONNX, data, vocabulary,
CSV and log-file writes, progress lines, and the models pickled into checkpoints.

Every rank of a DDP run executes the whole script, so a write that the single-GPU script
made once happens N times, to the same file, at once. :func:`plan` decides, for the calls the
recorder kept (``ddpify.convert.writes.is_candidate``), which statements move under
``if ddpify.is_main_process():``, which ``open(..., "w")`` calls become
``ddpify.rank_zero(open)(...)`` (the body still runs everywhere, other ranks write nowhere),
and which writes need a human because the statement also computes something every rank must.
A file rank 0 now writes alone is recorded (``Facts.rank_zero_files``): ``reloads.plan`` makes
the ranks that read it back wait.
Helpers of this file that write are ``output_helpers``'s; paths each rank names differently
are ``paths``'s.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.rank_zero import (
    already_guarded,
    is_call_statement,
    is_write_open,
    must_run_everywhere,
    on_rank_zero_only,
    ordered_first,
    replaces_a_stream,
    statement_of,
    write_label,
)
from ddpify.convert.planners.read_back import ReadBack, removed_path, written_path
from ddpify.convert.record import Recording
from ddpify.convert.writes import CSV_WRITERS, DATA_WRITERS, SERIALIZERS
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, of_types

# Data files that scripts typically read back (a split written, then loaded by every rank).
READ_BACK = frozenset({".to_csv()"})


def plan(recording: Recording, facts: Facts) -> None:
    """Fill ``facts`` with the guards, rank-zero opens and unwraps for the recorded write calls."""
    calls = recording.write_calls
    reads = ReadBack(recording)
    guarded_withs = _plan_opens(recording, facts, [c for c in calls if is_write_open(recording, c)])
    for call in calls:
        label = write_label(recording, call)
        if label is not None and not any(a in guarded_withs for a in recording.ancestors(call)):
            _plan_write(recording, facts, call, label, reads)
        if recording.qualified(call) & SERIALIZERS:
            _plan_unwrapped_save(recording, facts, call)


# ---------------------------------------------------------------- log files
def _plan_opens(recording: Recording, facts: Facts, opens: list[cst.Call]) -> set[cst.With]:
    """A ``with open(p, "w") as f:`` block that only writes is guarded whole; a handle kept in a
    variable (a log) or given to a checkpoint save is opened on rank 0 only,
    ``ddpify.rank_zero(open)(...)``, and so is a block's that also computes (every rank runs the
    block; the others write nowhere; a later read of the file waits for it: ``reloads``); an ``open`` handed to a writer whose statement is guarded (``pickle.dump(x, open(p,
    "wb"))``) goes with it. Returns the blocks guarded whole."""
    guarded: set[cst.With] = set()
    for call in opens:
        if already_guarded(recording, call) or _given_to_guarded_writer(recording, facts, call):
            continue
        if recording.analysis.output.per_rank_file(call):
            continue  # open(f"log-{rank}.txt", "w"): each rank's own file
        item = recording.parent(call)
        block = recording.parent(item) if isinstance(item, cst.WithItem) else None
        if isinstance(block, cst.With) and _only_writes(recording, facts, block):
            guarded.add(block)
            writers = [label for c in of_types(block.body, cst.Call) if (label := write_label(recording, c)) in DATA_WRITERS]
            facts.main_process_only[block] = f"{writers[0]} into a file" if writers else "log file written"
            _written_alone(facts, block, writers[0] if writers else "open(..., 'w')", written_path(recording, call))
        elif not replaces_a_stream(
            recording, facts, call
        ):  # a kept handle, a checkpoint's file, or a block that also computes: every rank runs it, rank 0 writes
            facts.rank_zero_opens.add(call)
            if isinstance(block, cst.With) and not _saves_checkpoint(recording, block):
                _written_alone(facts, block, "open(..., 'w')", written_path(recording, call))
    return guarded


def _given_to_guarded_writer(recording: Recording, facts: Facts, call: cst.Call) -> bool:
    """``pickle.dump(vocab, open(p, "wb"))``: the statement is the writer alone, guarded whole."""
    arg = recording.parent(call)
    writer = recording.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(writer, cst.Call)
        and write_label(recording, writer) is not None
        and is_call_statement(statement_of(recording, writer), writer)
        and must_run_everywhere(recording, facts, writer) is None
    )


def _saves_checkpoint(recording: Recording, block: cst.With) -> bool:
    """``with open(p, "wb") as f: torch.save(model, f)``: the save is rank 0's already, but
    every rank's ``open`` would truncate the file rank 0 writes."""
    return any(recording.qualified(c) & names.TORCH_SAVE for c in of_types(block.body, cst.Call))


def _only_writes(recording: Recording, facts: Facts, block: cst.With) -> bool:
    """Every item opens a file for writing and every statement of the body is a call (or binds
    a csv writer) with no forward pass or collective in it."""
    items = [i.item for i in block.items]
    if not all(isinstance(i, cst.Call) and is_write_open(recording, i) for i in items):
        return False
    if not isinstance(block.body, cst.IndentedBlock):
        return False
    for statement in block.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Assign):
                if not (isinstance(small.value, cst.Call) and recording.qualified(small.value) & CSV_WRITERS):
                    return False
            elif not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
                return False
    return must_run_everywhere(recording, facts, block.body) is None


# ---------------------------------------------------------------- statements
def _plan_write(recording: Recording, facts: Facts, call: cst.Call, label: str, reads: ReadBack) -> None:
    """Guard the statement that is just this call; report one that does more. A file that
    names its rank is each rank's own: left alone."""
    if already_guarded(recording, call) or recording.analysis.output.per_rank_file(call):
        return
    statement = statement_of(recording, call)
    line = recording.line(call)
    if statement is None:
        return  # a write in a loop header, a condition, ...: nothing to move
    statement = _one_line_if(recording, statement, call) or statement
    if not is_call_statement(statement, call) and not isinstance(statement, cst.If):
        facts.manual.append(
            ManualItem(
                line,
                f"{label} runs on every rank and shares its statement with other code",
                "put the write on its own line under `if ddpify.is_main_process():`",
            )
        )
        return
    blocker = must_run_everywhere(recording, facts, statement)
    if blocker is not None:
        facts.manual.append(
            ManualItem(
                line,
                f"{label} runs on every rank, but its statement also calls {blocker}, which every rank must run "
                "(guarded, a forward through DDP or a collective on rank 0 alone hangs)",
                "compute the value on every rank first, then write it under `if ddpify.is_main_process():`",
            )
        )
        return
    if _report_removal_under_reads(recording, facts, call, label, reads):
        return
    facts.main_process_only[statement] = label
    if label in READ_BACK:
        facts.manual.append(
            ManualItem(
                line,
                f"{label} is now written by rank 0 alone: a rank that reads the file back may find it missing or incomplete",
                "if the file is read back, call ddpify.barrier() after the `if ddpify.is_main_process():` block",
            )
        )
    else:
        _written_alone(facts, statement, label, written_path(recording, call))


def _one_line_if(recording: Recording, statement: cst.CSTNode, call: cst.Call) -> cst.If | None:
    """``if os.path.exists(prev): os.remove(prev)`` on one line, with no ``else``: the whole
    ``if`` is the write, guarded as one statement."""
    parent = recording.parent(statement)
    single = isinstance(statement, cst.SimpleStatementSuite) and len(statement.body) == 1
    if not single or not isinstance(parent, cst.If) or parent.orelse is not None or parent.body is not statement:
        return None
    small = statement.body[0]
    return parent if isinstance(small, cst.Expr) and small.value is call else None


def _report_removal_under_reads(recording: Recording, facts: Facts, call: cst.Call, label: str, reads: ReadBack) -> bool:
    """``os.remove(p)`` / ``shutil.rmtree(d)`` / ``shutil.move(p, q)`` of a path the script also
    reads: on rank 0 alone it may vanish while a slower rank still reads it, so the change is
    reported (with the barrier that makes it safe), not guarded. True when reported."""
    path = removed_path(recording, call)
    if path is None:
        return False
    read_at = reads.line_reading(
        path,
        after=0,
        unless=lambda read: read is call or on_rank_zero_only(recording, facts, read) or ordered_first(recording, facts, read),
    )
    if read_at is None:
        return False
    facts.manual.append(
        ManualItem(
            recording.line(call),
            f"{label} makes {code(path)} vanish on every rank (all but the first fail with FileNotFoundError), and the script "
            f"reads {code(path)} at line {read_at}: on rank 0 alone it could vanish while another rank still reads it",
            f"call ddpify.barrier() (on every rank) once all the reads are done, then `if ddpify.is_main_process(): {code(call)}`",
        )
    )
    return True


def _written_alone(facts: Facts, statement: cst.CSTNode, label: str, path: cst.BaseExpression | None) -> None:
    """Rank 0 now writes ``path`` alone: its reads back wait for it (``reloads.plan``)."""
    if path is not None:
        facts.rank_zero_files.append((statement, label, path))


# ---------------------------------------------------------------- whole-model checkpoints
def _plan_unwrapped_save(recording: Recording, facts: Facts, call: cst.Call) -> None:
    """``torch.save(model, f)``, ``state = {"net": net}; torch.save(state, f)`` and
    ``torch.onnx.export(model, ...)`` would pickle or trace the DDP wrapper; the value becomes
    ``ddpify.unwrap(model)``, written out in the code so it also holds where the save stays
    ``torch.save`` (behind a rank test) and so a rank-0-only export runs no DDP forward."""
    if not call.args:
        return
    first = call.args[0]
    models = facts.model_keys
    if code(first.value) in models:
        facts.unwrapped_values.add(first)
        return
    for value in _dict_literals(recording, first.value, call):
        for element in value.elements:
            if isinstance(element, cst.DictElement) and code(element.value) in models:
                facts.unwrapped_values.add(element)


def _dict_literals(recording: Recording, value: cst.BaseExpression, save: cst.Call) -> Iterator[cst.Dict]:
    """The dict literal saved: written in the call, or assigned to the saved name in the same function."""
    if isinstance(value, cst.Dict):
        yield value
    elif isinstance(value, cst.Name):
        function = recording.function_of(save)
        for assigned in recording.values_of(value.value):
            if isinstance(assigned, cst.Dict) and recording.function_of(assigned) is function:
                yield assigned
