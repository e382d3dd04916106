"""``save_checkpoint(state)`` from the project's own modules, or ``checkpoint_io.save(...)`` of
an object of a project class whose method writes (GAN_stability's ``CheckpointIO``): every rank
would write the same file at once, so the statement runs on rank 0 (``Facts.rank_zero_helpers``)
and the trained models it is given go in unwrapped (``Facts.unwrapped_args``). Building such a
class (``CheckpointIO(checkpoint_dir=...)``) saves nothing: it is left alone."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.calls import behind_rank_test, builds_project_object, project_helper, runs_companion_code
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code


def plan(recording: Recording, facts: Facts) -> None:
    """``save_checkpoint(state)`` from the project's utils writes a file: every rank would
    write it (a race on one path), so the statement runs on rank 0 only, with trained models
    passed unwrapped (no ``module.`` keys, no pickled DDP wrapper). Its code is in another
    file, so whether it calls collectives (which would hang the other ranks) is reported."""
    for call in recording.checkpoint_calls:
        helper = project_helper(recording, call) or _saving_method(recording, call)
        if helper is None or behind_rank_test(recording, call) or builds_project_object(recording, call):
            continue
        if runs_companion_code(recording, facts, call):
            continue  # converted alongside: its saves are ddpify.save, which waits for every rank
        expression = recording.parent(call)
        statement = recording.parent(expression) if isinstance(expression, cst.Expr) else None
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            facts.manual.append(
                ManualItem(
                    recording.line(_statement(recording, call)),
                    f"{helper}() (another file; by its name it saves a checkpoint) runs on every rank, and its result is used "
                    "here: the statement cannot go under a rank-0 guard, the name would be unbound on the other ranks",
                    f"inside {helper}(), write on rank 0 only (if ddpify.is_main_process():) and save ddpify.unwrap(model); "
                    "return its result on every rank",
                )
            )
            continue
        facts.rank_zero_helpers[statement] = helper
        facts.unwrapped_args.update((a, "checkpoint code") for a in call.args if code(a.value) in facts.model_keys)


def _statement(recording: Recording, node: cst.CSTNode) -> cst.CSTNode:
    """The statement ``node`` belongs to: a report points at its first line."""
    for ancestor in recording.ancestors(node):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ancestor
    return node


def _saving_method(recording: Recording, call: cst.Call) -> str | None:
    """``checkpoint_io.save`` when ``checkpoint_io`` is an object of a project class whose
    ``save`` is read and writes, trains nothing and runs no collective (``Helper``)."""
    if not isinstance(call.func, cst.Attribute):
        return None
    helper = recording.analysis.source.project_call(call)
    if helper is None or not helper.writes or helper.trains or helper.distributed:
        return None
    return code(call.func)
