"""Gradient accumulation: a loop that calls ``backward()`` every iteration but steps only under
a ``%`` test. Its other micro-batches should skip DDP's all-reduce (``model.no_sync()``), so
the loop gets ``ddpify.sync_gradients(model, when=<the test>)`` (``Facts.accumulation``)."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.statements import find_outside_definitions, targets
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import attribute_name, code, has_binary_operator, of_types


def plan(recording: Recording, facts: Facts) -> None:
    """A loop that calls backward() every iteration but steps the optimizer only under a
    ``%`` test accumulates gradients: its other micro-batches should skip DDP's all-reduce."""
    for loop in recording.for_loops:
        if not isinstance(loop.body, cst.IndentedBlock):
            continue
        statements = list(loop.body.body)
        if not [c for c in find_outside_definitions(loop.body, cst.Call) if attribute_name(c.func) == "backward"]:
            continue
        gate = next((s for s in statements if isinstance(s, cst.If) and _steps_under_modulo(s)), None)
        if gate is None:
            continue
        text = code(loop.body)
        if "no_sync" in text or "sync_gradients" in text:
            continue
        assigned = {code(t) for s in statements for t in targets(s)}
        used = {n.value for n in of_types(gate.test, cst.Name)}
        forwarded = [k for k in facts.model_keys if any(code(c.func) == k for c in of_types(loop.body, cst.Call))]
        model = forwarded[0] if len(forwarded) == 1 else next(iter(facts.model_keys)) if len(facts.model_keys) == 1 else None
        if used & assigned or model is None:
            facts.manual.append(
                ManualItem(
                    recording.line(gate),
                    "gradient accumulation: every micro-batch all-reduces its gradients",
                    "run the non-stepping micro-batches' forward and backward under model.no_sync() (ddpify.sync_gradients(model, when=<steps now>))",
                )
            )
            continue
        facts.accumulation[loop] = (model, code(gate.test))


def _steps_under_modulo(gate: cst.If) -> bool:
    """``if (i + 1) % accumulate == 0: optimizer.step()``."""
    return has_binary_operator(gate.test, cst.Modulo) and any(attribute_name(c.func) == "step" for c in of_types(gate.body, cst.Call))
