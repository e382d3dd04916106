"""Output helpers of this file: ``imshow(make_grid(images))``, ``plot_values(...)`` -- a
module-level function whose body writes or shows output (``plt.show()``, ``plt.pause()``,
``save_image``, a write ``open``...) or draws a figure (``plt.imshow``), called as a statement:
the whole call runs on rank 0, the plotting around the write being rank 0's work too.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameSource

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.rank_zero import (
    already_guarded,
    is_call_statement,
    is_write_open,
    must_run_everywhere,
    statement_of,
    write_label,
)
from ddpify.convert.record import Recording
from ddpify.convert.writes import DRAWERS
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import code, of_types

# Method calls that train: a helper making them is training code, not an output helper.
TRAINING_METHODS = frozenset({"backward", "step", "zero_grad"})


def plan(recording: Recording, facts: Facts) -> None:
    """Guard (or report) the calls of this file's output helpers."""
    for call in recording.write_calls:
        _plan_output_helper(recording, facts, call)


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
    statement = statement_of(recording, call)
    if not is_call_statement(statement, call) or already_guarded(recording, call):
        return
    calls = of_types(helper.body, cst.Call)
    writes = [label for c in calls if (label := _helper_write(recording, c))]
    verb = "writes"
    if not writes:
        writes, verb = [label for c in calls if (label := _drawn(recording, c))], "draws"
    if not writes or _trains(helper) or helper in recording.analysis.training_functions:
        return
    name = call.func.value  # type: ignore[attr-defined]
    blocker = must_run_everywhere(recording, facts, helper.body, saves=False) or _model_handed_in(facts, call)
    if blocker is None and must_run_everywhere(recording, facts, helper.body) is not None:
        # its torch.save is ddpify.save now (rank 0 writes, the others wait at its barrier):
        # the call must stay on every rank, and nothing is left to do
        facts.changes.append(
            Change(
                recording.line(call),
                f"{name}() saves with torch.save and writes output: the call stays on every rank (its save is "
                "ddpify.save, written by rank 0 while the others wait), its other writes are guarded inside it",
            )
        )
    elif blocker is not None:
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
        label = f"{name}() (a helper of this file that {verb} output: {', '.join(dict.fromkeys(writes))})"
        facts.main_process_only[statement] = label  # type: ignore[index]


def _helper_write(recording: Recording, call: cst.Call) -> str | None:
    """What ``call`` in a helper's body writes (prints excepted: they are ddpify.print already)."""
    return write_label(recording, call) or ("open(..., 'w')" if is_write_open(recording, call) else None)


def _drawn(recording: Recording, call: cst.Call) -> str | None:
    """``plt.imshow(img)``: a figure drawn, for a helper that writes nothing (the script or a
    later call shows it)."""
    drawn = recording.qualified(call) & DRAWERS
    return f"plt.{min(drawn).rsplit('.', 1)[1]}" if drawn else None


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


def _model_handed_in(facts: Facts, call: cst.Call) -> str | None:
    """``show_predictions(net, batch)``: the helper receives a trained model, so its forward
    runs through DDP whatever the parameter is called."""
    for arg in call.args:
        if code(arg.value) in facts.model_keys:
            return f"the trained model {code(arg.value)} (passed to it)"
    return None
