"""Forwards of a DDP model in code only rank 0 runs: ``if writer:`` of a ``SummaryWriter`` or
``visdom.Visdom`` that is rank 0's alone after the conversion (the other ranks hold a falsy
no-op object), or under a rank test. A forward through the wrapper is a collective: with
``broadcast_buffers`` (the default) it broadcasts the BatchNorm buffers, so rank 0 waits there
for ranks that never come (unseen20r's ctgan: ``generator(noise_fixed)`` for visdom's samples
hung both ranks). Such a forward runs on the plain module, ``ddpify.unwrap(model)(...)``: the
same parameters, no collective. A region that also runs a backward is rank 0 training alone,
which no rewrite makes right; it is left as it is."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names, rewrites
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.rank_zero import already_guarded
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import callee_name, code, is_simple_reference, of_types


def plan(recording: Recording, facts: Facts) -> None:
    if not facts.wraps_models():
        return
    stand_ins = _stand_ins(recording, facts)
    held = {h.key for h in facts.held_models}
    for model in recording.analysis.models.models:
        if model.key not in facts.model_keys or model.key in held:
            continue
        for site in model.forward_calls:
            call = site.node
            if not isinstance(call, cst.Call) or not is_simple_reference(call.func) or call.func in facts.node_rewrites:
                continue
            region = _rank_zero_region(recording, call, stand_ins)
            if region is None or any(callee_name(c) == "backward" for c in of_types(region, cst.Call)):
                continue
            model_name = code(call.func)
            facts.node_rewrites[call.func] = NodeRewrite(
                rewrites.unwrapped_callee,
                f"{model_name}(...) runs on rank 0 only ({_why(region)}): the forward goes to the plain module, "
                f"ddpify.unwrap({model_name})(...) (through the DDP wrapper it would broadcast buffers to ranks that never come: a hang)",
            )


def _stand_ins(recording: Recording, facts: Facts) -> set[str]:
    """Names that hold a rank-0 object: ``writer = SummaryWriter(...)``, ``vis = visdom.Visdom(...)``,
    a project logger class built on rank 0 only (``Facts.rank_zero_clients``)."""
    found: set[str] = set()
    for call in recording.analysis.source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        client = call in facts.rank_zero_clients or names.is_rank_zero_client(recording.qualified(call.func))
        assign = recording.parent(call)
        if not client or call in facts.kept_writes or not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            continue
        if is_simple_reference(assign.targets[0].target):
            found.add(code(assign.targets[0].target))
    return found


def _rank_zero_region(recording: Recording, call: cst.Call, stand_ins: set[str]) -> cst.CSTNode | None:
    """The ``if`` body (or the statement) around ``call`` that only rank 0 runs, else None."""
    child: cst.CSTNode = call
    for ancestor in recording.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            break
        if isinstance(ancestor, cst.If) and child is ancestor.body and _tests_stand_in(ancestor.test, stand_ins):
            return ancestor.body
        child = ancestor
    if already_guarded(recording, call):
        statement = next((a for a in recording.ancestors(call) if isinstance(a, cst.BaseCompoundStatement)), None)
        return statement if statement is not None else call
    return None


def _tests_stand_in(test: cst.BaseExpression, stand_ins: set[str]) -> bool:
    """``if writer:``, ``if use_vis and vis:`` (``vis is not None`` holds on every rank: the
    no-op object is not None)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _tests_stand_in(test.left, stand_ins) or _tests_stand_in(test.right, stand_ins)
    return is_simple_reference(test) and code(test) in stand_ins


def _why(region: cst.CSTNode) -> str:
    return "under a test of a rank-0 object, falsy on the other ranks" if isinstance(region, cst.IndentedBlock) else "under a rank test"
