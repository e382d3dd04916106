"""The loop shapes of gradient accumulation that DDP020 reads and the fix it writes: which
test gates the step, which loop is over models rather than micro-batches, the loop body put
under ``no_sync()``."""

from __future__ import annotations

import re

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.tree.cstutil import callee_name, code, of_types

Loop = cst.For | cst.While
_OPTIMIZER_NAME = re.compile(r"(^|[._])(optim\w*|opt|opt_\w+|\w*_opt|\w*optimizer\w*)$", re.I)
_NOT_OPTIMIZER = re.compile(r"sched|lr_|warmup", re.I)
# A step gate named for accumulation (``if counter >= cfg.gradient_accumulation_steps:``, ``== gradient_interval``):
# accumulation whatever the comparison, also in a method the training loop calls once per batch.
_ACCUMULATION = re.compile(r"accum|grad(ient)?_interval|update_freq", re.I)
_MODELS = re.compile(r"model|net|optim|critic|discriminator|generator", re.I)


def wraps_in_project(source: Source, call: cst.Call) -> bool:
    """``create_ddp_model(model)``: a project helper that wraps the model in DDP (``Helper.wraps_ddp``)."""
    helper = source.project.helper(call)
    return helper is not None and helper.wraps_ddp


def accumulation_named(test: cst.BaseExpression) -> bool:
    """The test reads a name or attribute named for accumulation (``gradient_accumulation_steps``)."""
    return any(_ACCUMULATION.search(n.value) for n in of_types(test, cst.Name))


def iterates_models(loop: cst.For | cst.While) -> bool:
    """``for net, opt in zip(nets, optimizers):``: a loop over models, one backward each."""
    if not isinstance(loop, cst.For):
        return False
    target = {n.value for n in of_types(loop.target, cst.Name)}
    called = {c.func.value for c in of_types(loop.body, cst.Call) if isinstance(c.func, cst.Name)}
    return bool(target & called) or bool(_MODELS.search(code(loop.iter)))


def only_continues(statement: cst.If) -> bool:
    """``if ...: continue`` (and nothing else, no ``else``)."""
    body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else []
    small = [s for line in body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    return statement.orelse is None and len(body) == 1 and len(small) == 1 and isinstance(small[0], cst.Continue)


def rebound_in(loop: Loop, test: cst.BaseExpression) -> bool:
    """Does the loop body rebind a name the step test reads (``step += 1``, ``i = ...``)?"""
    read = {n.value for n in of_types(test, cst.Name)}
    bound: set[str] = set()
    for node in of_types(loop.body, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For):
        if isinstance(node, cst.Assign):
            targets: list[cst.CSTNode] = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            bound.update(n.value for n in of_types(target, cst.Name))
    return bool(read & bound)


def synced(loop: cst.For, model: str, when: str) -> cst.For:
    """The loop body under ``no_sync()`` except on the micro-batch that steps, in plain PyTorch
    (a model without ``no_sync``, a single-process run, syncs as before)."""
    assert isinstance(loop.body, cst.IndentedBlock)
    header = f'with {model}.no_sync() if hasattr({model}, "no_sync") and not ({when}) else contextlib.nullcontext():\n    pass\n'
    block = cst.parse_statement(header)
    assert isinstance(block, cst.With) and isinstance(block.body, cst.IndentedBlock)
    inner = block.with_changes(body=block.body.with_changes(body=loop.body.body))
    return loop.with_changes(body=loop.body.with_changes(body=[inner]))


def is_optimizer_step(call: cst.Call, optimizers: set[str]) -> bool:
    """``optimizer.step()``, ``scaler.step(optimizer)``, a project's ``amp.step(model, optimizer)``:
    a step of one of ``optimizers`` (names bound to an optimizer) or of a name that reads as one."""
    if callee_name(call) != "step" or not isinstance(call.func, cst.Attribute):
        return False
    owner = code(call.func.value)
    if owner in optimizers:
        return True
    if call.args and code(call.args[0].value) in optimizers | {owner}:  # scaler.step(optimizer)
        return True
    if call.args and _OPTIMIZER_NAME.search(code(call.args[0].value)) and not _NOT_OPTIMIZER.search(code(call.args[0].value)):
        return True
    if not _NOT_OPTIMIZER.search(owner) and any(
        code(a.value) in optimizers or _OPTIMIZER_NAME.search(code(a.value)) for a in call.args[1:]
    ):
        return True  # a project's step helper: ``amp.step(model, optimizer, scheduler)``
    return bool(_OPTIMIZER_NAME.search(owner)) and not _NOT_OPTIMIZER.search(owner)
