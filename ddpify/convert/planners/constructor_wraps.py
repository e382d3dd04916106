"""Models a module class builds and trains in its constructor (DomainBed's algorithms:
``self.network = nn.Sequential(...)`` and ``self.optimizer = Adam(self.network.parameters())``
in ``__init__``, or in a set-up method only ``__init__`` calls), the instance moved by code of
another file (``algorithm.to(device)``). Each is wrapped at the end of each such constructor
with ``on_rank_device`` (under CUDA on this rank's GPU first, so that later move moves nothing);
every method then runs it through the wrapper. ``self.discriminator`` of one class is not
another class's: each constructor wraps its own.

Not when this file moves or loads it, builds it elsewhere, or a constructor may return early;
and a model whose own methods the class calls (``self.gen_a.encode(x)``, MUNIT) would train
around the wrapper's forward: ``bypasses`` names those calls, and the caller holds the model."""

from __future__ import annotations

import dataclasses

import libcst as cst

from ddpify.analysis.models import Model
from ddpify.analysis.own_training import Bypass
from ddpify.convert.fact_types import Facts
from ddpify.convert.planners import wrap_options
from ddpify.convert.planners.wrap_options import ON_RANK_DEVICE
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, of_types

# nn.Module's own methods: calling them on the wrapper is fine (DDP is a module)
_MODULE_API = frozenset(
    {
        *("parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules", "named_modules"),
        *("train", "eval", "to", "cuda", "cpu", "float", "half", "double", "type", "state_dict", "load_state_dict"),
        *("zero_grad", "apply", "requires_grad_", "forward", "register_buffer", "register_parameter", "add_module"),
        *("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "share_memory"),
    }
)


def constructors(recording: Recording, model: Model, key: str) -> set[cst.FunctionDef] | None:
    """The constructors that build ``key`` (``self.X``) and its optimizers, when this is such a
    model (see the module docstring); None otherwise."""
    source = recording.analysis.source
    if not key.startswith("self.") or key.count(".") != 1 or model.moves or model.loads or model.container:
        return None
    setups = {recording.function_of(site.node) for site in model.optimizers}
    found = {_constructor_of(recording, f) for f in setups}
    inits = {f for f in found if f is not None}
    if not inits or len(inits) < len(found) or any(of_types(f, cst.Return) or not _body(f) for f in inits):
        return None
    owners = {source.enclosing_class(f) for f in inits}
    built = [v for s, v in source.assignments.get(key, []) if source.enclosing_class(s) in owners]
    if not built or not all(isinstance(v, cst.Call) and recording.function_of(v) in inits | setups for v in built):
        return None  # built in those constructors (or the set-up methods they call) only
    return inits


def bypasses(recording: Recording, key: str, inits: set[cst.FunctionDef]) -> tuple[Bypass, ...]:
    """The calls of ``key``'s own methods in its classes whose result a training function
    uses (``z = self.gen_a.encode(x)`` before a backward); a call made for its effect
    (``self.network.reset_weights(w)``, Fish's weight copy) runs no forward to average."""
    source = recording.analysis.source
    owners = {source.enclosing_class(f) for f in inits}
    training = recording.analysis.training_functions
    return tuple(
        Bypass(call, recording.line(call), call.func.attr.value)
        for call in source.of_types(cst.Call)
        if isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and code(call.func.value) == key
        and call.func.attr.value not in _MODULE_API
        and source.enclosing_class(call) in owners
        and source.enclosing_function(call) in training
        and not isinstance(source.parent(call), cst.Expr)
    )


def plan(recording: Recording, facts: Facts, model: Model, key: str, inits: set[cst.FunctionDef]) -> None:
    """The wrap after the last statement of each constructor."""
    whole = (
        dataclasses.replace(model, parts=()) if key in {f"{model.key}.{p}" for p in model.parts} else model
    )  # the part is what is wrapped
    for init in sorted(inits, key=recording.line):
        anchor = _body(init)[-1]
        facts.model_wraps.append((key, anchor, "after"))
        wrap_options.unused_parameters(recording, facts, whole, key, anchor)
        facts.wrap_options[anchor, key] = ", ".join(o for o in (facts.wrap_options.get((anchor, key), ""), ON_RANK_DEVICE) if o)
        wrap_options.run_through_wrapper(recording, facts, model, key, anchor)
    wrap_options.route_own_training(recording, facts, model, key)


def _body(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    return list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []


def _constructor_of(recording: Recording, function: cst.FunctionDef | None) -> cst.FunctionDef | None:
    """``function`` itself when it is an ``__init__``; the ``__init__`` of its class when that
    is the only code calling it (URM's ``self._setup_adversarial_net()``); else None."""
    if function is None or function.name.value == "__init__":
        return function
    source = recording.analysis.source
    callers = {source.enclosing_function(c) for c in source.call_sites(function)}
    init = callers.pop() if len(callers) == 1 else None
    if init is None or init.name.value != "__init__" or source.enclosing_class(init) is not source.enclosing_class(function):
        return None
    return init
