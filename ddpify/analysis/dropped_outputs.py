"""What a module's ``forward`` computes with a submodule and then drops: ``x_v, x_h = layer(x_v,
x_h)`` in a loop over ``self.res_layers`` with only ``x_h`` read afterwards (PixelCNN: the last
layer's vertical-stack normalisation then gets no gradient), ``aux = self.aux_head(x)`` never
read, ``self.probe(x)`` as a statement, a distillation teacher called only under
``torch.no_grad()`` or detached. The parameters that only produce the dropped value get no
gradient in that step, so DDP waits for them unless ``find_unused_parameters=True``.

A value is dropped when no read of its name follows the assignment in the method (a read later
in the same loop body, or after the loop, uses it). A read earlier in the loop body belongs to
the next iteration, which the last iteration never has: the last of a list of layers then
produces nothing used; one submodule called in every iteration (``embedding =
self.embedding(word)`` fed back into the next step) produces values the earlier iterations
use, so its parameters get their gradient. Several outputs of one call count
only for submodules of the project's own classes: a ``torch.nn`` module that returns a tuple
(``out, (h, c) = self.lstm(x)``, attention weights) computes them all from the same parameters."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.batches import NO_GRAD, SET_GRAD
from ddpify.analysis.callgraph import CallGraph, binding_site
from ddpify.analysis.modules import is_module_class, registers
from ddpify.tree.cstutil import code


def dropped_outputs(graph: CallGraph, klass: cst.ClassDef, root: str = "forward") -> tuple[str, ...]:
    """Phrases naming each dropped output of a submodule call in ``klass``'s own ``root``
    method: "the x_v output of its last res_layers call"."""
    forward = next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == root), None)
    if forward is None:
        return ()
    submodules = _registered(graph, klass)
    teachers = [f"the gradient of self.{a}'s output (it runs without gradients)" for a in _called_without_gradients(graph, klass, forward)]
    if not submodules:
        return tuple(teachers)
    names = graph.source.of_types_in(forward.body, cst.Name)
    order = {id(n): i for i, n in enumerate(names)}
    loads: dict[str, list[int]] = {}
    targets = {id(n) for n in _targets(graph, forward)}
    for name in names:
        if id(name) not in targets:
            loads.setdefault(name.value, []).append(order[id(name)])
    loop_of = _loop_variables(graph, forward, submodules)
    found: list[str] = []
    for statement in graph.own(forward, cst.SimpleStatementLine):
        assert isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if not isinstance(value, cst.Call):
                continue
            attribute, last = _submodule_called(value, submodules, loop_of)
            if attribute is None:
                continue
            what = f"its last {attribute} call" if last else f"self.{attribute}"
            if isinstance(small, cst.Expr):
                found.append(f"the output of {what}")
                continue
            assert isinstance(small, cst.Assign)
            outputs = [e for t in small.targets for e in _names(t.target)]
            several = len(outputs) > 1 or any(isinstance(t.target, (cst.Tuple, cst.List)) for t in small.targets)
            if several and not submodules[attribute]:
                continue  # a torch.nn module's outputs all come from its parameters
            end = max((order[id(n)] for n in graph.source.of_types_in(small, cst.Name) if id(n) in order), default=-1)
            start = end if last else _loop_start(graph, small, forward, order)
            for output in outputs:
                if output == "_" or not any(i > end or start < i < end for i in loads.get(output, [])):
                    found.append(f"the {output} output of {what}" if several else f"the output of {what}")
    return tuple(dict.fromkeys([*found, *teachers]))


def _loop_start(graph: CallGraph, statement: cst.CSTNode, forward: cst.FunctionDef, order: dict[int, int]) -> int:
    """The position of the first name in the innermost loop of ``forward`` around ``statement``
    (reads from there on are the next iteration's), or past the end when it is in no loop."""
    for ancestor in graph.source.ancestors(statement):
        if ancestor is forward:
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            return min((order[id(n)] for n in graph.source.of_types_in(ancestor, cst.Name) if id(n) in order), default=len(order))
    return len(order)


def _called_without_gradients(graph: CallGraph, klass: cst.ClassDef, forward: cst.FunctionDef) -> list[str]:
    """Submodules ``forward`` calls only without gradients (``with torch.no_grad(): t =
    self.t_net(x)``, ``self.t_net(x).detach()``): a teacher's parameters never get a gradient
    through this module, though they may require one. A submodule is one that ``__init__``
    builds or is handed (``self.t_net = t_net``)."""
    submodules = set(_registered(graph, klass)) | _handed_in(graph, klass)
    inside: list[str] = []
    outside: set[str] = set()
    for call in graph.source.of_types_in(forward.body, cst.Call):
        attribute = _self_attribute(call.func)
        if attribute not in submodules:
            continue
        if _detached(graph, call) or any(isinstance(a, cst.With) and _without_gradients(graph, a) for a in graph.source.ancestors(call)):
            inside.append(attribute)
        else:
            outside.add(attribute)
    return [a for a in dict.fromkeys(inside) if a not in outside]


def _handed_in(graph: CallGraph, klass: cst.ClassDef) -> set[str]:
    """Attributes ``__init__`` sets to one of its parameters as it is (``self.t_net = t_net``)."""
    init = next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return set()
    params = {p.name.value for p in init.params.params}
    found = set()
    for attribute, (stores, _) in graph.attributes(klass).items():
        for store, method in stores:
            site = binding_site(graph.source, store)
            if method is init and isinstance(site, cst.Assign) and isinstance(site.value, cst.Name) and site.value.value in params:
                found.add(attribute)
    return found


def _without_gradients(graph: CallGraph, block: cst.With) -> bool:
    """``with torch.no_grad():`` (or ``inference_mode``, ``set_grad_enabled(False)``)."""
    for item in block.items:
        call = item.item if isinstance(item.item, cst.Call) else None
        names = graph.source.qualified(call.func if call is not None else item.item)
        if names & NO_GRAD or (names & SET_GRAD and call is not None and call.args and code(call.args[0].value) == "False"):
            return True
    return False


def _detached(graph: CallGraph, call: cst.Call) -> bool:
    """``self.t_net(x).detach()``: nothing computed from the output reaches the parameters."""
    parent = graph.source.parent(call)
    return isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value == "detach"


def project_dropped_outputs(graph: CallGraph) -> dict[str, tuple[str, ...]]:
    """For a project module's summary: ``Class.__init__`` of each module class whose forward
    drops an output of a submodule call."""
    found: dict[str, tuple[str, ...]] = {}
    for klass in graph.source.of_types(cst.ClassDef):
        if graph.source.enclosing_function(klass) is None and is_module_class(graph, klass):
            dropped = dropped_outputs(graph, klass)
            if dropped:
                found[f"{klass.name.value}.__init__"] = dropped
    return found


def _registered(graph: CallGraph, klass: cst.ClassDef) -> dict[str, bool]:
    """The submodules ``__init__`` registers, each with whether it is (or holds) an instance of
    a class that is not ``torch.nn``'s own."""
    init = next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    found: dict[str, bool] = {}
    for attribute, (stores, _) in graph.attributes(klass).items():
        sites = [binding_site(graph.source, s) for s, method in stores if method is init]
        if any(registers(graph, site) for site in sites):
            found[attribute] = any(_own_class(graph, site) for site in sites)
    return found


def _own_class(graph: CallGraph, site: cst.CSTNode | None) -> bool:
    value = site.value if isinstance(site, cst.Assign) else None
    calls = [c for c in graph.source.of_types_in(value, cst.Call)] if value is not None else []
    return any(not any(q.startswith("torch.") for q in graph.source.qualified(c.func)) and _is_class(graph, c) for c in calls)


def _is_class(graph: CallGraph, call: cst.Call) -> bool:
    klass = graph.class_called(call)
    if klass is not None:
        return is_module_class(graph, klass)
    name = call.func.attr.value if isinstance(call.func, cst.Attribute) else call.func.value if isinstance(call.func, cst.Name) else ""
    return name[:1].isupper()  # a class of a module the file imports


def _loop_variables(graph: CallGraph, forward: cst.FunctionDef, submodules: dict[str, bool]) -> dict[str, str]:
    """``for layer in self.res_layers:`` (also ``enumerate(...)``, ``zip(...)``): layer -> res_layers."""
    found: dict[str, str] = {}
    for loop in graph.own(forward, cst.For):
        assert isinstance(loop, cst.For)
        iterated = loop.iter
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name) and iterated.func.value in ("enumerate", "zip"):
            iterated = next((a.value for a in iterated.args if _self_attribute(a.value) in submodules), iterated)
        attribute = _self_attribute(iterated)
        if attribute in submodules:
            for name in _names(loop.target):
                found[name] = attribute
    return found


def _submodule_called(call: cst.Call, submodules: dict[str, bool], loop_of: dict[str, str]) -> tuple[str | None, bool]:
    """The submodule a call runs (``self.head(x)``, ``self.blocks[i](x)``, ``layer(x)`` of a loop
    over ``self.blocks``) and whether it is a loop's element (its last call is the one)."""
    func = call.func
    if isinstance(func, cst.Subscript):
        func = func.value
    attribute = _self_attribute(func)
    if attribute in submodules:
        return attribute, isinstance(call.func, cst.Subscript)
    if isinstance(func, cst.Name) and func.value in loop_of:
        return loop_of[func.value], True
    return None, False


def _self_attribute(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    return []


def _targets(graph: CallGraph, forward: cst.FunctionDef) -> list[cst.Name]:
    """The names ``forward`` binds (assignment and loop targets): not reads."""
    found: list[cst.Name] = []
    for node in graph.source.of_types_in(forward.body, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor):
        if isinstance(node, cst.Assign):
            found += [n for t in node.targets for n in graph.source.of_types_in(t.target, cst.Name) if _bare(t.target, n)]
        elif isinstance(node, (cst.For, cst.CompFor)):
            found += [n for n in graph.source.of_types_in(node.target, cst.Name) if _bare(node.target, n)]
        elif isinstance(node, cst.AnnAssign):
            found += [node.target] if isinstance(node.target, cst.Name) else []
    return found


def _bare(target: cst.BaseExpression, name: cst.Name) -> bool:
    """``name`` is bound by ``target`` itself (not read as ``x`` in ``x[i] = ...``)."""
    return (
        isinstance(target, cst.Name)
        and target is name
        or (isinstance(target, (cst.Tuple, cst.List)) and any(_bare(e.value, name) for e in target.elements))
    )
