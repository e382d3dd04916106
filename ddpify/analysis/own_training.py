"""A model's own methods, seen from DDP: which of them read parameters outside the forward, and
which train the model through its own forward so that the forward can run through the wrapper.

DDP averages the gradients of a backward only when the forward before it ran through the
wrapper. ``model.encode(x)`` runs parameters around it; a method that reads none
(``init_hidden`` building zeros) does not matter. A method that trains the model itself
(``out = self(x); loss.backward(); self.optimizer.step()``) is fine once ``self(x)`` is the
wrapper's call: the converter writes ``ddpify.wrapped(self)(x)`` there.
"""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.callgraph import CallGraph, binding_site
from ddpify.analysis.modules import MODULE_API, registers


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
