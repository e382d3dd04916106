"""Calls of the project's own output helpers: ``plot_samples(model, noise, folder, epoch)`` of
a sibling module, a function (or a method of a project object) that writes files, images or
logs and does nothing the ranks share (``Helper.writes``, no training, no collective, not the
process group's, no change to what it is handed: ``Helper.changes_arguments``), called as a statement. Every rank would write the same files at once (a race
on one path, N copies of every image): the statement runs on rank 0 only, under
``if ddpify.is_main_process():``, and the trained models it is given go in as
``ddpify.unwrap(model)``: a forward through the DDP wrapper on rank 0 alone could wait for the
other ranks (buffers are broadcast), the plain module's does not, and its parameters are the
same on every rank. A call whose result is used stays on every rank (the name would be unbound
elsewhere); so do helpers whose name says they save checkpoints (``checkpoints`` plans those)."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.calls import builds_project_object, runs_companion_code
from ddpify.convert.planners.rank_zero import already_guarded, is_call_statement, statement_of
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code


def plan(recording: Recording, facts: Facts) -> None:
    source = recording.analysis.source
    for call in source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        helper = source.project_call(call) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        if helper is None or not helper.writes or helper.trains or helper.distributed or helper.joins_group:
            continue
        if helper.changes_arguments or helper.writes_cache:
            continue  # rank 0 alone must change nothing the others go on with (a model left in eval mode, a cache they read)
        if runs_companion_code(recording, facts, call):
            continue  # converted alongside: it writes on rank 0 itself, and its ddpify.save waits for every rank
        statement = statement_of(recording, call)
        if not is_call_statement(statement, call) or already_guarded(recording, call) or builds_project_object(recording, call):
            continue
        assert isinstance(statement, cst.SimpleStatementLine)
        if statement in facts.rank_zero_helpers or statement in facts.main_process_only or statement in facts.node_rewrites:
            continue
        models = [a for a in call.args if code(a.value) in facts.model_keys]
        facts.unwrapped_args.update((a, "output code") for a in models)
        facts.main_process_only[statement] = f"{code(call.func)}() (another file, which writes files or images)"
