"""Per-rank side effects beyond checkpoints and prints: image, figure, ONNX, CSV and log-file
writes, progress lines, and the models pickled into checkpoints.

Every rank of a DDP run executes the whole script, so a write that the single-GPU script
made once happens N times, to the same file, at once. :func:`plan` decides, for the calls the
recorder kept (``ddpify.convert.writes.is_candidate``), which statements move under
``if ddpify.is_main_process():``, which ``open(..., "w")`` calls become
``ddpify.rank_zero(open)(...)`` (the body still runs everywhere, other ranks write nowhere),
and which writes need a human because the statement also computes something every rank must.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import sys
from collections.abc import Iterator

import libcst as cst
from libcst.metadata import QualifiedNameSource

from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.convert.writes import CSV_WRITE_METHODS, CSV_WRITERS, OPEN, SERIALIZERS, STAR_IMPORTED_WRITERS, WRITE_METHODS, WRITERS
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, of_types

# Data files that scripts typically read back (a split written, then loaded by every rank).
READ_BACK = frozenset({".to_csv()"})
RUNTIME_COLLECTIVES = frozenset({"ddpify.runtime.save", "ddpify.runtime.barrier"})
# Method calls that train: a helper making them is training code, not an output helper.
TRAINING_METHODS = frozenset({"backward", "step", "zero_grad"})


def plan(recording: Recording, facts: Facts) -> None:
    """Fill ``facts`` with the guards, rank-zero opens and unwraps for the recorded write calls."""
    calls = recording.write_calls
    guarded_withs = _plan_opens(recording, facts, [c for c in calls if _is_write_open(recording, c)])
    for call in calls:
        label = _write_label(recording, call)
        if label is not None and not any(a in guarded_withs for a in recording.ancestors(call)):
            _plan_write(recording, facts, call, label)
        if recording.qualified(call) & SERIALIZERS:
            _plan_unwrapped_save(recording, facts, call)
    for call in calls:
        _plan_output_helper(recording, facts, call)
    _report_clock_directories(recording, facts, calls)


# ---------------------------------------------------------------- what writes
def _write_label(recording: Recording, call: cst.Call) -> str | None:
    """A short name for what ``call`` writes, or None when it writes nothing we guard."""
    for name in recording.qualified(call):
        if name in WRITERS:
            return WRITERS[name]
    if _star_imported_writer(recording, call):
        return code(call.func)
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in WRITE_METHODS:
        return f".{func.attr.value}()"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in CSV_WRITE_METHODS:
        writer = func.value.value
        values = recording.values_of(writer)
        if any(isinstance(v, cst.Call) and recording.qualified(v) & CSV_WRITERS for v in values):
            return f"{writer}.{func.attr.value}"
    if isinstance(func, cst.Name) and "progress" in func.value.lower() and _imported_from_local_module(recording, func):
        return f"{func.value} (a progress helper from a local module)"
    return None


def _star_imported_writer(recording: Recording, call: cst.Call) -> bool:
    """``sys.stdout.write(...)`` with ``sys`` bound nowhere in the file but a star import
    present: the star import is where ``sys`` comes from (see STAR_IMPORTED_WRITERS)."""
    if not recording.star_import or recording.qualified(call) or code(call.func) not in STAR_IMPORTED_WRITERS:
        return False
    head = call.func
    while isinstance(head, cst.Attribute):
        head = head.value
    return not recording.bindings(head, ())


def _imported_from_local_module(recording: Recording, name: cst.Name) -> bool:
    """``from utils import progress_bar``: the module is the project's own, not an installed one."""
    for qualified in recording.qualified_names(name):
        if qualified.source is QualifiedNameSource.IMPORT:
            return qualified.name.startswith(".") or not _installed(qualified.name.split(".")[0])
    return False


@functools.lru_cache(maxsize=64)
def _installed(module: str) -> bool:
    """Whether ``module`` is the standard library's or installed; the working directory is left
    out of the search, so a ``utils.py`` beside the script counts as local wherever ddpify runs."""
    if module in sys.stdlib_module_names:
        return True
    here = {"", os.getcwd()}
    path = [p for p in sys.path if p not in here]
    return importlib.machinery.PathFinder.find_spec(module, path) is not None


def _is_write_open(recording: Recording, call: cst.Call) -> bool:
    """``open(path, "w" | "a" | "x" [+ "b"])``: creates or appends to a file (no reading)."""
    if not recording.qualified(call) & OPEN:
        return False
    mode = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "mode"), None)
    if mode is None and len(call.args) > 1 and call.args[1].keyword is None:
        mode = call.args[1].value
    if not isinstance(mode, cst.SimpleString):
        return False
    text = str(mode.evaluated_value)
    return bool(set(text) & set("wax")) and not set(text) & set("r+")


# ---------------------------------------------------------------- log files
def _plan_opens(recording: Recording, facts: Facts, opens: list[cst.Call]) -> set[cst.With]:
    """A ``with open(p, "w") as f:`` block that only writes is guarded whole; a handle kept in a
    variable (a log) or given to a checkpoint save is opened on rank 0 only,
    ``ddpify.rank_zero(open)(...)``; any other write ``open`` is reported (its block computes,
    and other ranks may read the file back). Returns the blocks guarded whole."""
    guarded: set[cst.With] = set()
    for call in opens:
        if _already_guarded(recording, call):
            continue
        item = recording.parent(call)
        block = recording.parent(item) if isinstance(item, cst.WithItem) else None
        if isinstance(block, cst.With) and _only_writes(recording, facts, block):
            guarded.add(block)
            facts.main_process_only[block] = "log file written"
        elif isinstance(item, cst.Assign) or isinstance(block, cst.With) and _saves_checkpoint(recording, block):
            facts.rank_zero_opens.add(call)
        else:
            facts.manual.append(
                ManualItem(
                    recording.line(call),
                    "file opened for writing on every rank, in code that also computes",
                    "if one process should write it, open it with ddpify.rank_zero(open)(...) (the others write nowhere); "
                    "if the ranks read it back, call ddpify.barrier() after rank 0 has written it",
                )
            )
    return guarded


def _saves_checkpoint(recording: Recording, block: cst.With) -> bool:
    """``with open(p, "wb") as f: torch.save(model, f)``: the save is rank 0's already, but
    every rank's ``open`` would truncate the file rank 0 writes."""
    return any(recording.qualified(c) & names.TORCH_SAVE for c in of_types(block.body, cst.Call))


def _only_writes(recording: Recording, facts: Facts, block: cst.With) -> bool:
    """Every item opens a file for writing and every statement of the body is a call (or binds
    a csv writer) with no forward pass or collective in it."""
    items = [i.item for i in block.items]
    if not all(isinstance(i, cst.Call) and _is_write_open(recording, i) for i in items):
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
    return _must_run_everywhere(recording, facts, block.body) is None


# ---------------------------------------------------------------- statements
def _plan_write(recording: Recording, facts: Facts, call: cst.Call, label: str) -> None:
    """Guard the statement that is just this call; report one that does more."""
    if _already_guarded(recording, call):
        return
    statement = _statement_of(recording, call)
    line = recording.line(call)
    if statement is None:
        return  # a write in a loop header, a condition, ...: nothing to move
    if not _is_call_statement(statement, call):
        facts.manual.append(
            ManualItem(
                line,
                f"{label} runs on every rank and shares its statement with other code",
                "put the write on its own line under `if ddpify.is_main_process():`",
            )
        )
        return
    blocker = _must_run_everywhere(recording, facts, statement)
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
    facts.main_process_only[statement] = label
    if label in READ_BACK:
        facts.manual.append(
            ManualItem(
                line,
                f"{label} is now written by rank 0 alone: a rank that reads the file back may find it missing or incomplete",
                "if the file is read back, call ddpify.barrier() after the `if ddpify.is_main_process():` block",
            )
        )


def _statement_of(recording: Recording, call: cst.Call) -> cst.CSTNode | None:
    """The simple statement (line or one-line suite) holding ``call``, or None."""
    for ancestor in recording.ancestors(call):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return ancestor
        if isinstance(ancestor, (cst.BaseCompoundStatement, cst.Lambda)):
            return None
    return None


def _must_run_everywhere(recording: Recording, facts: Facts, node: cst.CSTNode) -> str | None:
    """The first forward of a trained model or collective in ``node``, as text, or None."""
    models = facts.model_keys
    for call in of_types(node, cst.Call):
        assert isinstance(call, cst.Call)
        func = code(call.func)
        if func in models or func.removesuffix(".forward") in models:
            return f"{func}(...)"
        qualified = recording.qualified(call)
        if qualified & (names.TORCH_SAVE | RUNTIME_COLLECTIVES) or any(q.startswith(names.DISTRIBUTED_PREFIXES) for q in qualified):
            return f"{func}(...)"
    return None


def _already_guarded(recording: Recording, node: cst.CSTNode) -> bool:
    """Inside an ``if`` on the rank (``if rank == 0:``, ``if ddpify.is_main_process():``)."""
    child = node
    for ancestor in recording.ancestors(node):
        if isinstance(ancestor, cst.If) and child is not ancestor.test and names.RANK_TEST.search(code(ancestor.test)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        child = ancestor
    return False


# ---------------------------------------------------------------- local output helpers
def _plan_output_helper(recording: Recording, facts: Facts, call: cst.Call) -> None:
    """``imshow(grid)`` as a statement, ``imshow`` a module-level function of this file that
    writes output (plt.show, save_image, ...): the whole call runs on rank 0. One level deep:
    only the helper's own body is read. A helper that trains, or that also runs a trained
    model's forward or a collective, stays on every rank (the latter is reported: on rank 0
    alone it would hang); so does one that changes state outside itself or calls this file's
    other functions and classes. Its writes are still guarded one by one."""
    helper = recording.module_function(call.func.value) if isinstance(call.func, cst.Name) else None
    if helper is None:
        return
    statement = _statement_of(recording, call)
    if not _is_call_statement(statement, call) or _already_guarded(recording, call):
        return
    writes = [label for c in of_types(helper.body, cst.Call) if (label := _helper_write(recording, c))]
    if not writes or _trains(helper):
        return
    name = call.func.value  # type: ignore[attr-defined]
    blocker = _must_run_everywhere(recording, facts, helper.body) or _model_handed_in(recording, facts, call)
    if blocker is not None:
        facts.manual.append(
            ManualItem(
                recording.line(call),
                f"{name}() runs {blocker} and writes output on every rank; its writes are guarded "
                "or reported inside it, the call stays on every rank (a forward through DDP or a collective on rank 0 alone hangs)",
                f"keep calling {name}() on every rank, or run its forwards on ddpify.unwrap(model) under torch.no_grad() "
                "and call it under `if ddpify.is_main_process():`",
            )
        )
    elif not _changes_outside_state(recording, helper):
        label = f"{name}() (a helper of this file that writes output: {', '.join(dict.fromkeys(writes))})"
        facts.main_process_only[statement] = label  # type: ignore[index]


def _is_call_statement(statement: cst.CSTNode | None, call: cst.Call) -> bool:
    """``statement`` is ``call`` alone: its result is used nowhere."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and statement.body[0].value is call
    )


def _helper_write(recording: Recording, call: cst.Call) -> str | None:
    """What ``call`` in a helper's body writes (prints excepted: they are ddpify.print already)."""
    return _write_label(recording, call) or ("open(..., 'w')" if _is_write_open(recording, call) else None)


def _trains(helper: cst.FunctionDef) -> bool:
    """``loss.backward()``, ``optimizer.step()``: training code that also logs, not an output helper."""
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in TRAINING_METHODS for c in of_types(helper.body, cst.Call))


def _changes_outside_state(recording: Recording, helper: cst.FunctionDef) -> bool:
    """``global``/``nonlocal``, attribute or item assignments, method calls on module-level
    variables (``history.append(x)``), calls of this file's own functions and classes: effects
    the other ranks may need, or code one level deeper that is not read. Changes made through
    the helper's arguments (``values.sort()``) are not seen."""
    if of_types(helper.body, cst.Global, cst.Nonlocal):
        return True
    for assign in of_types(helper.body, cst.AssignTarget, cst.AugAssign, cst.AnnAssign):
        if isinstance(assign.target, (cst.Attribute, cst.Subscript)):  # type: ignore[attr-defined]
            return True
    for call in of_types(helper.body, cst.Call):
        func = call.func
        if isinstance(func, cst.Name) and recording.defines(func.value):
            return True
        if isinstance(func, cst.Attribute) and _is_module_variable(recording, func.value):
            return True
    return False


def _is_module_variable(recording: Recording, node: cst.BaseExpression) -> bool:
    """``history`` bound at module level by this file (not an import: ``plt`` is a module)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and any(
        q.source is QualifiedNameSource.LOCAL and "." not in q.name for q in recording.qualified_names(node)
    )


def _model_handed_in(recording: Recording, facts: Facts, call: cst.Call) -> str | None:
    """``show_predictions(net, batch)``: the helper receives a trained model, so its forward
    runs through DDP whatever the parameter is called."""
    for arg in call.args:
        if code(arg.value) in facts.model_keys:
            return f"the trained model {code(arg.value)} (passed to it)"
    return None


# ---------------------------------------------------------------- clock-named directories
def _report_clock_directories(recording: Recording, facts: Facts, calls: list[cst.Call]) -> None:
    """``out = Path("runs", time.strftime(...)); out.mkdir()``: every rank reads its own clock,
    so ranks a second apart create different directories (and later look for their files in
    their own). Reported at the directory creation, once per name; the conversion cannot pick
    one rank's name without a collective, which belongs where the name is computed."""
    reported: set[str] = set()
    for call in calls:
        path = _created_directory(recording, call)
        for variable in _variables(recording, path) if path is not None else ():
            clock = _clock_call(recording, variable, recording.function_of(call), set())
            if clock is None or variable in reported:
                continue
            reported.add(variable)
            facts.manual.append(
                ManualItem(
                    recording.line(call),
                    f"the name of {variable} uses the clock ({clock}): ranks may create different directories",
                    "compute it on rank 0 and broadcast it (torch.distributed.broadcast_object_list), or derive it from a launcher/job id",
                )
            )


def _created_directory(recording: Recording, call: cst.Call) -> cst.BaseExpression | None:
    """The path ``call`` creates as a directory: ``os.makedirs(path)``, ``path.mkdir()``."""
    if recording.qualified(call) & names.MAKE_DIRECTORY:
        return call.args[0].value if call.args else None
    return call.func.value if isinstance(call.func, cst.Attribute) and call.func.attr.value == "mkdir" else None


def _clock_call(recording: Recording, variable: str, function: cst.FunctionDef | None, seen: set[str]) -> str | None:
    """The clock call (``time.strftime()``) that a value of ``variable`` is built from,
    directly or through other variables assigned in ``function`` or at module level."""
    seen.add(variable)
    for value in recording.values_of(variable):
        if recording.function_of(value) not in (function, None):
            continue
        for call in of_types(value, cst.Call):
            if recording.qualified(call) & names.CLOCK:
                return f"{code(call.func)}()"
        for name in _variables(recording, value):
            if name not in seen and (clock := _clock_call(recording, name, function, seen)):
                return clock
    return None


def _variables(recording: Recording, node: cst.CSTNode) -> list[str]:
    """The plain names read in ``node``: ``base`` and ``stamp`` in ``os.path.join(base, stamp)``,
    not ``path`` or ``join``, nor a keyword's name."""
    found: list[str] = []
    for name in of_types(node, cst.Name):
        parent = recording.parent(name)
        if not (isinstance(parent, cst.Attribute) and parent.attr is name or isinstance(parent, cst.Arg) and parent.keyword is name):
            found.append(name.value)
    return found


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
