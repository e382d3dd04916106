"""A model's own methods, seen from DDP: which of them read parameters outside the forward, and
which train the model through its own forward so that the forward can run through the wrapper.

DDP averages the gradients of a backward only when the forward before it ran through the
wrapper. ``model.encode(x)`` runs parameters around it; a method that reads none
(``init_hidden`` building zeros) does not matter. A method that trains the model itself
(``out = self(x); loss.backward(); self.optimizer.step()``) is fine once ``self(x)`` is the
wrapper's call: the converter writes ``ddpify.wrapped(self)(x)`` there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.callgraph import CallGraph, binding_site
from ddpify.analysis.modules import MODULE_API, is_module_class, registers, unused_submodules
from ddpify.tree.cstutil import callee_name, code, is_simple_reference

if TYPE_CHECKING:
    from ddpify.analysis.batches import Batches
    from ddpify.analysis.source import Source


@dataclass(frozen=True)
class Bypass:
    """A use of the model's own member. In ``bypasses``: a call of its own method or submodule
    on the training path (``model.encode(x)``, ``model.module.forward(x)``), which runs around
    DDP's forward, so its gradients are not averaged; ``method``: the called attribute path.
    In ``own_uses``: any use of a member that is not ``nn.Module``'s (``model.decode(z)``,
    ``model.latent_dim``), which a DDP wrapper does not have; ``method``: that member.
    ``through_module``: reached via ``.module`` / ``ddpify.unwrap``."""

    node: cst.CSTNode
    line: int
    method: str
    through_module: bool = False
    called: bool = True


def parameter_free(graph: CallGraph, klass: cst.ClassDef, name: str, seen: set[str] | None = None) -> bool:
    """``klass``'s method ``name`` provably reads no parameter (``init_hidden`` returning
    ``torch.zeros(1, batch, self.hidden)``): calling it outside the forward averages nothing
    away. Every use of ``self`` in it must be a plain data attribute (stored, never a module
    or parameter) or a call of another such method; anything else counts as a parameter."""
    seen = set() if seen is None else seen
    method = graph.method(klass, name)
    if method is None or name in seen:
        return method is not None
    seen.add(name)
    own = _self_name(method)
    if own is None:
        return False
    for node in graph.source.of_types_in(method.body, cst.Name):
        if node.value != own:
            continue
        parent = graph.source.parent(node)
        if not (isinstance(parent, cst.Attribute) and parent.value is node) or parent.attr.value in MODULE_API:
            return False
        member = parent.attr.value
        if graph.method(klass, member) is not None:
            if not parameter_free(graph, klass, member, seen):
                return False
            continue
        if _registered(graph, klass, member):
            return False
    return True


def routable_forwards(graph: CallGraph, klass: cst.ClassDef, name: str) -> tuple[cst.Call, ...]:
    """The ``self(...)`` / ``self.forward(...)`` calls of ``klass``'s method ``name``, when that
    method runs the model's parameters only through them: routed through the DDP wrapper, the
    method's backward averages its gradients. None when the method also runs a submodule or a
    parameter-reading method directly, hands ``self`` to other code, or never forwards (a GAN
    class stepping two nets it holds)."""
    method = graph.method(klass, name)
    own = _self_name(method) if method is not None else None
    if method is None or own is None:
        return ()
    forwards: list[cst.Call] = []
    for node in graph.source.of_types_in(method.body, cst.Name):
        if node.value != own:
            continue
        parent = graph.source.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            forwards.append(parent)
        elif isinstance(parent, cst.Arg):
            return ()  # handed to code that may run its submodules directly
        elif isinstance(parent, cst.Attribute) and isinstance(call := graph.source.parent(parent), cst.Call) and call.func is parent:
            member = parent.attr.value
            if member == "forward":
                forwards.append(call)
            elif member not in MODULE_API and not (
                parameter_free(graph, klass, member) if graph.method(klass, member) is not None else not _registered(graph, klass, member)
            ):
                return ()
    return tuple(forwards)


def _registered(graph: CallGraph, klass: cst.ClassDef, member: str) -> bool:
    """``self.member`` may hold parameters: a registered submodule (not ``nn.CrossEntropyLoss()``),
    or a member this file never stores."""
    stores = graph.attribute_stores(klass, member)
    return not stores or any(registers(graph, binding_site(graph.source, s)) for s, _ in stores)


def _self_name(method: cst.FunctionDef) -> str | None:
    params = [*method.params.posonly_params, *method.params.params]
    return params[0].name.value if params else None


def module_methods(graph: CallGraph) -> dict[str, frozenset[str]]:
    """The module's top-level ``nn.Module`` classes, each with its own methods (what
    ``Helper.module_methods`` says of ``Class.__init__`` to the files that build one)."""
    found: dict[str, frozenset[str]] = {}
    for klass in graph.source.of_types(cst.ClassDef):
        assert isinstance(klass, cst.ClassDef)
        if graph.source.enclosing_class(klass) is None and graph.source.enclosing_function(klass) is None and is_module_class(graph, klass):
            own = (s.name.value for s in klass.body.body if isinstance(s, cst.FunctionDef))
            found[klass.name.value] = frozenset(name for name in own if not name.startswith("__"))
    return found


def called_through_wrapper(
    graph: CallGraph,
    bypasses: list[Bypass],
    forwarding: set[cst.FunctionDef | None],
    klass: cst.ClassDef | None,
    built: list[cst.Call],
) -> tuple[tuple[cst.Call, ...], bool]:
    """``loss = -model.log_probs(x).mean()``: own-method calls on the training path that can
    run inside the DDP wrapper's forward (``ddpify.through_ddp(model).log_probs(x)``, which
    makes DDP call that method instead of ``forward``), so their backward is averaged. Every
    bypass must be one: a call of a method of the model itself (not of a submodule, not
    ``.module``; of a module class of this file, or of the project's modules that ``built``
    constructs), the only use of the model in its function (no plain forward beside it), and a
    method that runs no backward or step itself (that one needs ``routable_forwards``). Also
    whether each such method provably runs the whole model (``self(...)`` only, or it reads
    every submodule the class registers); otherwise the wrap needs ``find_unused_parameters=True``."""
    calls: list[cst.Call] = []
    whole = True
    functions = [graph.source.enclosing_function(b.node) for b in bypasses]
    for bypass, function in zip(bypasses, functions, strict=True):
        node = bypass.node
        if bypass.through_module or "." in bypass.method or bypass.method == "forward" or not isinstance(node, cst.Call):
            return (), False
        if function in forwarding or (functions.count(function) > 1 and not _backward_follows(graph.source, node, bypasses)):
            return (), False  # two DDP forwards before one backward: unused parameters become ambiguous
        if klass is not None:
            method = graph.method(klass, bypass.method)
            if method is None or not is_module_class(graph, klass):
                return (), False
            if trains_itself(graph.source, method):
                return (), False
            whole = whole and bool(routable_forwards(graph, klass, bypass.method) or not unused_submodules(graph, klass, bypass.method))
        else:
            classes = [graph.source.project_call(c) for c in built]
            if not classes or any(h is None or bypass.method not in h.module_methods for h in classes):
                return (), False  # not known to be a method of an nn.Module
            helper = graph.source.project_call(node)
            if helper is not None and helper.trains:
                return (), False
            whole = False
        calls.append(node)
    return tuple(calls), whole


def _backward_follows(source: Source, call: cst.Call, bypasses: list[Bypass]) -> bool:
    """``loss = vae.loss(x)`` then ``loss.backward()`` later in the same block, before any other
    of the model's calls: one forward, one backward (an inner encoder-only loop and the joint
    step after it each call the method once per backward)."""
    statement = source.statement_of(call)
    block = source.parent(statement) if statement is not None else None
    if statement is None or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return False
    others = {b.node for b in bypasses} - {call}
    body = list(block.body)
    for line in body[body.index(statement) :]:
        nodes = source.of_types_in(line, cst.Call)
        if any(n in others for n in nodes):
            return False
        if any(callee_name(n) == "backward" for n in nodes):
            return True
    return False


def trains_itself(source: Source, method: cst.FunctionDef) -> bool:
    """The method runs a backward or an optimizer step itself (``train_(x, y)``)."""
    return any(callee_name(c) in ("backward", "step") for c in source.of_types_in(method.body, cst.Call))


def feeds_no_training(source: Source, batches: Batches, call: cst.CSTNode, class_def: cst.ClassDef | None, built: list[cst.Call]) -> bool:
    """``sample = model.module.sample()`` at a print step (glow): what the method returns reaches
    no backward in its loop or function, and the method itself trains nothing: no backward or
    step in it (a class of this file), or none its project module's summary names (a class built
    from a project module, ``Helper.trains`` of ``Class.method``). It runs no gradient DDP has to
    average. A class that cannot be read keeps the call a bypass."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return False
    method = call.func.attr.value
    if class_def is not None:
        found = next((f for f in source.of_types_in(class_def, cst.FunctionDef) if f.name.value == method), None)
        if found is None or trains_itself(source, found):
            return False
    else:
        classes = {code(c.func) for c in built if is_simple_reference(c.func)}
        summaries = [(source.project.named(f"{k}.__init__"), source.project.named(f"{k}.{method}")) for k in classes]
        if not summaries or any(made is None or (own is not None and own.trains) for made, own in summaries):
            return False
    scope = next((a for a in source.ancestors(call) if isinstance(a, (cst.For, cst.While, cst.FunctionDef))), None)
    body = scope.body.body if scope is not None and isinstance(scope.body, cst.IndentedBlock) else source.module.body
    return batches.reach(list(body), seeds=[call]).backward is None
