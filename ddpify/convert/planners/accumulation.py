"""Gradient accumulation: a loop that calls ``backward()`` every iteration but steps the
model's optimizer only under a ``%`` test. Its other micro-batches should skip DDP's
all-reduce (``model.no_sync()``), so the loop gets ``ddpify.sync_gradients(model, when=<the
test>)`` (``Facts.accumulation``).

Skipping an all-reduce changes the maths when the schedule is not accumulation, so it takes
evidence: in the loop's own body, a backward outside the gate (every iteration) and none
inside it, every optimizer stepped in the loop stepped only under the gate, and those
optimizers training one model (the one ``sync_gradients`` is given). A GAN's ``if i % n_critic == 0:`` generator step (its own
backward under the gate, the critic's optimizer stepping every iteration) or a diffusion
sampler's ``scheduler.step(...)`` under ``if epoch % k == 0`` is no accumulation: nothing is
said about it.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts, item
from ddpify.convert.planners.statements import find_outside_definitions, targets
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import attribute_name, code, has_binary_operator, of_types


def plan(recording: Recording, facts: Facts) -> None:
    """``Facts.accumulation`` for each accumulating loop whose model and test are known; a
    report item for one whose step test reads values the loop computes."""
    optimizers = _optimizers(recording, facts)
    for loop in recording.for_loops:
        if not isinstance(loop.body, cst.IndentedBlock):
            continue
        statements = list(loop.body.body)
        gate = next((s for s in statements if isinstance(s, cst.If) and has_binary_operator(s.test, cst.Modulo)), None)
        if gate is None:
            continue
        models = _accumulated_models(loop, gate, optimizers)
        if not models:
            continue
        text = code(loop.body)
        if "no_sync" in text or "sync_gradients" in text:
            continue
        assigned = {code(t) for s in statements for t in targets(s)}
        used = {n.value for n in of_types(gate.test, cst.Name)}
        model = models[0] if len(models) == 1 else None  # sync_gradients is plain execution for a model left unwrapped
        if used & assigned or model is None:
            facts.manual.append(
                item(
                    recording.line(gate),
                    "gradient accumulation: every micro-batch all-reduces its gradients",
                    "run the non-stepping micro-batches' forward and backward under model.no_sync() (ddpify.sync_gradients(model, when=<steps now>))",
                )
            )
            continue
        facts.accumulation[loop] = (model, code(gate.test))


def _optimizers(recording: Recording, facts: Facts) -> dict[str, list[str]]:
    """The variables holding an optimizer (``optimizer``, ``self.opt_g``) -> the models it trains."""
    trains: dict[cst.Call, list[str]] = {}
    for call, key in facts.trained:
        trains.setdefault(call, []).append(key)
    found: dict[str, list[str]] = {}
    for assign, _ in recording.call_assignments:
        keys = trains.get(assign.value, []) if isinstance(assign.value, cst.Call) else []
        for target in assign.targets if keys else ():
            held = found.setdefault(code(target.target), [])
            held += [k for k in keys if k not in held]
    return found


def _accumulated_models(loop: cst.For, gate: cst.If, optimizers: dict[str, list[str]]) -> list[str]:
    """The models whose optimizer steps only under ``gate`` while backward runs every
    iteration of ``loop`` (its own body, not a nested loop); [] when that is not the schedule."""
    nested = {c for inner in of_types(loop.body, cst.For, cst.While) for c in of_types(inner, cst.Call)}
    own = [c for c in find_outside_definitions(loop.body, cst.Call) if c not in nested]
    inside = set(of_types(gate, cst.Call))
    backward = [c for c in own if attribute_name(c.func) == "backward"]
    if not backward or any(c in inside for c in backward):
        return []
    stepped = [(c, _stepped_optimizer(c, optimizers)) for c in own if attribute_name(c.func) == "step"]
    stepped = [(c, name) for c, name in stepped if name is not None]
    if not stepped or any(c not in inside for c, _ in stepped):
        return []
    return list(dict.fromkeys(key for _, name in stepped for key in optimizers[name]))  # type: ignore[index]


def _stepped_optimizer(call: cst.Call, optimizers: dict[str, list[str]]) -> str | None:
    """``optimizer`` of ``optimizer.step()`` / ``scaler.step(optimizer)``; None for other
    steps (a scheduler's, a diffusion sampler's)."""
    receiver = code(call.func.value) if isinstance(call.func, cst.Attribute) else None
    if receiver in optimizers:
        return receiver
    given = code(call.args[0].value) if call.args else None
    return given if given in optimizers else None
