"""What a wrap needs besides its place: ``find_unused_parameters=True`` where some parameters
may get no gradient in a step (submodules the forward never uses or picks at run time, a part
given to the optimizer, an input set to None), and the calls that must run through the
wrapper (a model that trains itself, a method run as the wrapper's forward)."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.models import Model
from ddpify.analysis.optional_inputs import sometimes_none_input
from ddpify.convert import rewrites
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.findings import Change
from ddpify.tree.cstutil import code

UNUSED_OPTION = "find_unused_parameters=True"
ON_RANK_DEVICE = "on_rank_device=True"  # a CPU model onto the rank's GPU before the wrap
DATA_PARALLEL = "data_parallel=True"  # one process keeps the nn.DataParallel the script made


def run_through_wrapper(recording: Recording, facts: Facts, model: Model, name: str, anchor: cst.CSTNode) -> None:
    """``loss = -model.log_probs(x).mean()``: the method runs as the wrapper's forward
    (``ModelFlow`` ``through``); a method not proven to run the whole model gets
    ``find_unused_parameters=True`` (DDP then waits for no gradient it will not get)."""
    for call in model.through:
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        method = call.func.attr.value
        facts.kept_attributes.add(call.func)
        facts.node_rewrites[call] = NodeRewrite(
            rewrites.through_ddp,
            f"{code(call.func)}(...) trains {name} outside its forward → ddpify.through_ddp({code(call.func.value)}).{method}(...): "
            "the DDP wrapper runs it as its forward, so its backward averages the gradients",
        )
    if model.through and not model.through_whole and (anchor, name) not in facts.wrap_options:
        facts.wrap_options[anchor, name] = UNUSED_OPTION
        methods = ", ".join(sorted({c.func.attr.value for c in model.through if isinstance(c.func, cst.Attribute)}))
        facts.changes.append(
            Change(
                recording.line(anchor),
                f"{name}'s own {methods}() may not use every parameter: wrapped with {UNUSED_OPTION} "
                "(DDP would otherwise stop at the second iteration, waiting for their gradients)",
            )
        )


def route_own_training(recording: Recording, facts: Facts, model: Model, name: str) -> None:
    """The model's class trains itself in a method (``out = self(x)`` then backward and step):
    that forward goes through the wrapper (``ModelFlow._routable``), so DDP averages it."""
    for call in model.routed:
        function = recording.analysis.source.enclosing_function(call)
        method = function.name.value if function is not None else "?"
        facts.node_rewrites[call] = NodeRewrite(
            rewrites.through_wrapper,
            f"{code(call.func)}(...) in {method}(), which trains {name} itself → ddpify.wrapped({code(call.func).split('.')[0]})"
            "(...): the forward runs through the DDP wrapper, so that backward averages the gradients",
        )


def unused_parameters(recording: Recording, facts: Facts, model: Model, name: str, anchor: cst.CSTNode) -> None:
    """Submodules its ``forward`` never uses or picks at run time, outputs it drops, or parameters
    no optimizer is given: DDP waits for their gradients and stops at the second iteration unless told to look
    for them."""
    if model.possibly_unused:
        why = f"{', '.join(model.possibly_unused)} of {name} {'is' if len(model.possibly_unused) == 1 else 'are'} never used by its forward"
    elif model.indexed:
        lists = ", ".join(model.indexed)
        why = (
            f"{name}'s forward runs {lists} at an index chosen at run time (a progressive network's current depth), "
            "so the modules it skips get no gradient in that step"
        )
    elif model.dropped:
        dropped = ", ".join(model.dropped)
        why = (
            f"{name}'s forward drops {dropped}, so the parameters that only produce "
            f"{'it' if len(model.dropped) == 1 else 'them'} get no gradient in a step"
        )
    elif model.parts and (model.submodules is None or not set(model.submodules) <= set(model.parts)):
        parts = ", ".join(f"{name}.{p}" for p in model.parts)
        why = f"only {parts} of {name} {'reaches' if len(model.parts) == 1 else 'reach'} the optimizer, so its other parameters may get no gradients"
    elif (emptied := sometimes_none_input(recording.analysis.models.dataflow, {model.key, *model.references})) is not None:
        argument, line = emptied
        why = (
            f"{argument} is set to None on some steps (line {line}) before {name}'s forward gets it: a model that skips the "
            f"layers using {argument} then (a label embedding for classifier-free guidance) gives them no gradient in those steps"
        )
    else:
        return
    facts.wrap_options[anchor, name] = UNUSED_OPTION
    facts.changes.append(
        Change(
            recording.line(anchor),
            f"{why}: wrapped with {UNUSED_OPTION} (DDP would otherwise stop at the second iteration, waiting for their gradients)",
        )
    )
