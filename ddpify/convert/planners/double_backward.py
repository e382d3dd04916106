"""A gradient of the DDP model's output taken with ``create_graph=True`` (a WGAN-GP or R1
gradient penalty): the penalty's backward reaches only the parameters its gradient depends on
(never the bias of the last layer), so DDP waits for gradients that never come and stops the
next forward with "Expected to have finished reduction in the prior iteration".

The first ``backward()`` after it, in the same function, of a loss computed from that gradient
gets ``0.0 * out.sum()`` added (``(d_loss_gp + 0.0 * out.sum()).backward()``): every parameter
is then in the backward, with a zero gradient where the penalty does not reach it, and the
values are unchanged. Where that loss or ``out`` cannot be named there, it is reported at the
``autograd.grad`` call with the same fix. A loss that also reads a plain forward of the model
(WGAN-GP's critic loss in one backward: ``D(fake).mean() - D(real).mean() + 10 * gp``) already
reaches every parameter and is left as it is."""

from __future__ import annotations

import functools

import libcst as cst

from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, is_simple_reference, keyword_value

_GRAD = frozenset({"torch.autograd.grad"})


def report(recording: Recording, facts: Facts) -> None:
    source = recording.analysis.source
    for call in source.calls_by_callee.get("grad", []):
        if not source.qualified(call) & _GRAD or not _is_true(keyword_value(call, "create_graph")):
            continue
        outputs = keyword_value(call, "outputs") or (call.args[0].value if call.args and call.args[0].keyword is None else None)
        model = _model_of(recording, facts, outputs) if outputs is not None else None
        if model is None:
            continue
        out = code(outputs)  # type: ignore[arg-type]
        receiver = _penalty_backward(recording, call) if is_simple_reference(outputs) else None  # type: ignore[arg-type]
        if receiver is not None and f"0.0 * {out}.sum()" in code(receiver):
            continue  # converted already
        if receiver is not None and _plain_forward_in(recording, receiver, model, outputs):  # type: ignore[arg-type]
            continue  # WGAN-GP in one loss: D(real) and D(fake) reach every parameter already
        if receiver is not None:
            loss = code(receiver)
            facts.node_rewrites[receiver] = NodeRewrite(
                functools.partial(_with_every_parameter, loss, out),
                f"{loss}.backward() → ({loss} + 0.0 * {out}.sum()).backward(): the gradient penalty of line "
                f"{recording.line(call)} differentiates {model}'s output, and DDP needs every parameter in the backward "
                "(zero where the penalty does not reach it; the values are unchanged)",
            )
            continue
        facts.manual.append(
            ManualItem(
                recording.line(call),
                f"torch.autograd.grad(..., create_graph=True) differentiates the output of {model}, now DDP-wrapped (a gradient "
                "penalty): its backward gives no gradient to the parameters the gradient does not depend on (a last layer's "
                "bias), and DDP then stops at the next forward ('Expected to have finished reduction in the prior iteration')",
                f"{'' if is_simple_reference(outputs) else f'keep the output in a name (out = {out}) and '}add 0.0 * "  # type: ignore[arg-type]
                f"{out if is_simple_reference(outputs) else 'out'}.sum() to the penalty before its backward() (every parameter "  # type: ignore[arg-type]
                "then gets a gradient, zero where unused), or compute the penalty and the loss it belongs to in one backward",
            )
        )


def _with_every_parameter(loss: str, out: str, _node: cst.CSTNode) -> cst.CSTNode:
    return cst.parse_expression(f"({loss} + 0.0 * {out}.sum())")


def _penalty_backward(recording: Recording, grad_call: cst.Call) -> cst.BaseExpression | None:
    """The receiver of the first ``X.backward()`` after ``grad_call`` in its function whose
    ``X`` is computed from the gradient (through names bound in that function, three deep)."""
    source = recording.analysis.source
    function = source.enclosing_function(grad_call)
    scope: cst.CSTNode = function if function is not None else source.module
    statement = source.statement_of(grad_call)
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if not isinstance(assign, cst.Assign):
        return None
    tainted = {n.value for t in assign.targets for n in source.of_types_in(t.target, cst.Name)}
    start = recording.line(grad_call)
    for _ in range(3):  # names computed from the gradient: `gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()`
        for bound in source.of_types_in(scope, cst.Assign):
            if recording.line(bound) > start and _mentions(source, bound.value, tainted):
                tainted |= {n.value for t in bound.targets for n in source.of_types_in(t.target, cst.Name)}
    for call in source.calls_by_callee.get("backward", []):
        func = call.func
        if source.enclosing_function(call) is function and recording.line(call) > start and isinstance(func, cst.Attribute):
            if _mentions(source, func.value, tainted):
                return func.value
    return None


def _plain_forward_in(recording: Recording, loss: cst.BaseExpression, model: str, outputs: cst.BaseExpression) -> bool:
    """``d_loss = D(fake).mean() - D(real).mean() + 10 * gp``: the loss also reads a forward of
    ``model`` other than the one the penalty differentiates (followed back through the names
    bound before the backward in its function, four deep): that forward puts every parameter in
    the backward, so no zero term is needed (ct-gan's critic step)."""
    source = recording.analysis.source
    function = source.enclosing_function(loss)
    scope: cst.CSTNode = function if function is not None else source.module
    end = recording.line(loss)
    differentiated = {code(outputs)}
    wanted = {n.value for n in [loss, *source.of_types_in(loss, cst.Name)] if isinstance(n, cst.Name)}
    values: list[cst.BaseExpression] = [loss]
    for _ in range(4):
        for bound in source.of_types_in(scope, cst.Assign):
            names = {n.value for t in bound.targets for n in source.of_types_in(t.target, cst.Name)}
            if recording.line(bound) < end and names & wanted and bound.value not in values:
                values.append(bound.value)
                wanted |= {n.value for n in source.of_types_in(bound.value, cst.Name)}
    for value in values:
        for call in source.of_types_in(value, cst.Call):
            if code(call.func).removesuffix(".forward") == model and code(call) not in differentiated:
                holder = source.parent(call)
                into = (
                    {n.value for t in holder.targets for n in source.of_types_in(t.target, cst.Name)}
                    if isinstance(holder, cst.Assign)
                    else set()
                )
                if not into & differentiated:  # `out, _ = D(x)`: the forward the penalty differentiates
                    return True
    return False


def _mentions(source: object, node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in [node, *source.of_types_in(node, cst.Name)])  # type: ignore[attr-defined]


def _is_true(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "True"


def _model_of(recording: Recording, facts: Facts, outputs: cst.BaseExpression) -> str | None:
    """The wrapped model whose forward made ``outputs``: a call of it, or a name bound to one."""
    source = recording.analysis.source
    values = [outputs]
    if is_simple_reference(outputs):
        values += [v for _, v in source.assignments.get(code(outputs), []) if v is not None]
        for assign in source.of_types(cst.Assign):  # `out, _, _ = self.D(x)`: one element of what the forward returns
            assert isinstance(assign, cst.Assign)
            unpacked = [t.target for t in assign.targets if isinstance(t.target, (cst.Tuple, cst.List))]
            if any(code(e.value) == code(outputs) for target in unpacked for e in target.elements):
                values.append(assign.value)
    for value in values:
        for call in [value, *source.of_types_in(value, cst.Call)]:
            if isinstance(call, cst.Call) and code(call.func).removesuffix(".forward") in facts.model_keys:
                return code(call.func).removesuffix(".forward")
    return None
