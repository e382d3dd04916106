"""Where a value goes and where it comes from, inside one file.

Data flow (a loader reaching a training loop) and model flow (a model reaching an optimizer, a
move, a wrap) ask the same two questions: which expressions evaluate to the value made here
(``Values.flow``), and where may the value of this expression have been made
(``Values.origins``). Both follow assignments, containers with literal keys, ``self.``
attributes, arguments into the file's own functions and their returns, so the two analyses
agree on what "the same object" is. Inside a function the flow follows source order (a later
assignment in a block around a read replaces the value); across functions it has no order. An
answer the code does not give is marked (``Origin.known``), never guessed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from ddpify.analysis.callgraph import CallGraph, binding_site, literal, reads_keys
from ddpify.analysis.source import Source
from ddpify.analysis.spellings import spelling, subscript_index, subscript_key
from ddpify.tree import cstutil

Slot = str | int | None  # None: the value itself; a key or index: that element of a container
ANY = "*"  # an element under a key that is not known
# One step the value takes unchanged (``outer``: to the expression around it, ``model.to(d)``;
# ``inner``: back to the expression inside it); None where there is none.
Step = Callable[[Source, cst.CSTNode], "cst.BaseExpression | None"]
_BUDGET = 5000  # expressions one question may visit: far above real scripts, a bound on odd ones
_CONTAINERS = {cst.List: "list", cst.Tuple: "tuple", cst.Set: "set", cst.Dict: "dict", cst.DictComp: "dict"}


@dataclass(frozen=True)
class Edge:
    """The value crosses frames: into a function as an argument (``enter``, at the call), out
    of one (``return``, at the call), to another method through ``self.x`` (``attribute``, at
    the assignment), or to a function that reads a variable of an outer scope (``closure``,
    at the bound name: a global read in a function, a closure); ``to``: the read reached by
    an ``attribute`` or ``closure`` step (its function runs at a time the file does not fix)."""

    kind: str
    site: cst.CSTNode
    to: cst.CSTNode | None = None


@dataclass(frozen=True)
class Occurrence:
    """An expression that evaluates to the value; ``trail``: the frames crossed to get there;
    ``key``: the run-time key of a container read on the way (``loaders[phase]``)."""

    node: cst.BaseExpression
    trail: tuple[Edge, ...] = ()
    key: cst.BaseExpression | None = None


@dataclass(frozen=True)
class Containment:
    """The value is put in a container: its kind ("list", "dict", "tuple", "set"), the
    container expression and the key or index (``ANY`` when not literal)."""

    kind: str
    node: cst.CSTNode
    key: str | int


@dataclass(frozen=True)
class Flow:
    occurrences: tuple[Occurrence, ...]
    containers: tuple[Containment, ...]


@dataclass(frozen=True)
class Origin:
    """Where a value may be made: ``node`` (a call, or where following stopped when not
    ``known``), the element ``slot`` of it that is meant, and the ``steps`` (forward order) the
    value takes from there to the asked expression."""

    node: cst.CSTNode
    steps: tuple[Edge, ...] = ()
    slot: Slot = None
    known: bool = True


_Item = tuple[cst.CSTNode, Slot, tuple[Edge, ...], "cst.BaseExpression | None"]


class Values(CallGraph):
    """The two questions, answered with the call graph and variable index of one file."""

    def __init__(self, source: Source) -> None:
        super().__init__(source)
        self._flows: dict[tuple, Flow] = {}

    # ------------------------------------------------------------------ forward
    def flow(
        self, start: cst.CSTNode, slot: Slot = None, *, outer: Step | None = None, returns: bool = True, prefix: tuple[Edge, ...] = ()
    ) -> Flow:
        """Every expression that evaluates to the value of ``start`` (or to element ``slot`` of
        it); ``start`` may also be a bound name (a parameter). ``returns=False`` stops at a
        ``return`` to callers other than the one the value came in from."""
        key = (start, slot, outer, returns, prefix)
        found = self._flows.get(key)
        if found is None:
            found = self._flows[key] = _Forward(self, outer, returns).run(start, slot, prefix)
        return found

    def entered_through(self, trail: tuple[Edge, ...]) -> cst.Call | None:
        """The call whose frame the end of ``trail`` is in (the last ``enter`` not returned from)."""
        depth = 0
        for edge in reversed(trail):
            if edge.kind == "return":
                depth += 1
            elif edge.kind == "enter":
                if depth == 0:
                    return edge.site  # type: ignore[return-value]
                depth -= 1
        return None

    # ------------------------------------------------------------------ backward
    def feeds_inner_loops(self, loop: cst.For, *, inner: Step | None = None) -> bool:
        """A loop inside ``loop`` iterates what a call builds from ``loop``'s items (``for dataset
        in tasks: for x in make_loader(dataset)``): those items are no batches."""
        names = {n.value for n in cstutil.of_types(loop.target, cst.Name)}
        for nested in cstutil.of_types(loop.body, cst.For):
            for origin in self.origins(nested.iter, inner=inner):
                if isinstance(origin.node, cst.Call) and self._builds_from(origin.node, names):
                    return True
        return False

    def _builds_from(self, call: cst.Call, names: set[str]) -> bool:
        """``call`` is given one of ``names`` and is no tensor operation (``torch.chunk(x, 2)``
        cuts a batch): a loader, a helper of the file or of the project."""
        qualified = self.source.qualified(call.func)
        library = any(q.startswith(("torch.", "numpy.", "builtins.")) and not q.startswith("torch.utils.data.") for q in qualified)
        return not library and bool(names & {n.value for a in call.args for n in cstutil.of_types(a.value, cst.Name)})

    def origins(self, expression: cst.CSTNode, slot: Slot = None, *, inner: Step | None = None) -> tuple[Origin, ...]:
        """Where the value of ``expression`` may be made, following assignments, containers,
        parameters to their arguments and calls of the file's functions to their returns."""
        found: list[Origin] = []
        seen: set[tuple[cst.CSTNode, Slot]] = set()
        queue: deque[tuple[cst.CSTNode, Slot, tuple[Edge, ...]] | Origin] = deque([(expression, slot, ())])
        budget = _BUDGET
        while queue and budget:
            budget -= 1
            item = queue.popleft()
            if isinstance(item, Origin):
                found.append(item)
                continue
            node, slot, steps = item
            if (node, slot) in seen:
                continue
            seen.add((node, slot))
            down = inner(self.source, node) if slot is None and inner is not None else None
            if down is not None:
                queue.append((down, None, steps))
            else:
                queue.extend(self._backward(node, slot, steps))
        return tuple(dict.fromkeys(found))

    def _backward(self, node: cst.CSTNode, slot: Slot, steps: tuple[Edge, ...]) -> list:
        unknown = [Origin(node, steps, slot, known=False)]
        if isinstance(node, cst.Name):
            if node.value in ("None", "True", "False"):
                return []
            stores = [node] if binding_site(self.source, node) is not None else self.stores_reaching(node)
            items = [item for store in stores for item in self._from_store(store, slot, steps)]
            if slot is not None:
                items += self._container_puts(node, slot, steps)
            return items or unknown
        if isinstance(node, cst.Attribute):
            owner = self.attribute_owner(node)
            if owner is None:
                return unknown
            method = self.method_of(node)
            items = []
            for stored, where in self.attribute_stores(owner, node.attr.value):
                jump = (Edge("attribute", stored, node),) if where is not method else ()
                items += self._from_store(stored, slot, jump + steps)
            return items or unknown
        if isinstance(node, cst.Subscript):
            key = subscript_key(node)
            return [(node.value, ANY if key is None else key, steps)] if slot is None else unknown
        if isinstance(node, cst.Call):
            functions = [f for f, _ in self.callees(node) if f.name.value != "__init__" and not self.is_generator(f)]
            if not functions:
                return [Origin(node, steps, slot)]
            returned = [r.value for f in functions for r in self.own(f, cst.Return) if r.value is not None]  # type: ignore[attr-defined]
            return [(value, slot, (Edge("return", node), *steps)) for value in returned] or unknown
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and slot is not None:
            values = [e.value for e in node.elements]
            if slot == ANY:
                return [(v, None, steps) for v in values]
            starred = any(isinstance(e, cst.StarredElement) for e in node.elements)
            return [(values[slot], None, steps)] if isinstance(slot, int) and slot < len(values) and not starred else unknown
        if isinstance(node, cst.Dict) and slot is not None:
            values = [e.value for e in node.elements if isinstance(e, cst.DictElement) and (slot == ANY or literal(e.key) == slot)]
            return [(v, None, steps) for v in values] or unknown
        if isinstance(node, (cst.DictComp, cst.ListComp, cst.SetComp, cst.GeneratorExp)) and slot is not None:
            return [(node.value if isinstance(node, cst.DictComp) else node.elt, None, steps)]
        if isinstance(node, cst.IfExp):
            return [(node.body, slot, steps), (node.orelse, slot, steps)]
        if isinstance(node, cst.BooleanOperation):
            return [(node.left, slot, steps), (node.right, slot, steps)]
        return unknown

    def _from_store(self, store: cst.CSTNode, slot: Slot, steps: tuple[Edge, ...]) -> list:
        """What a bound name or attribute holds: the assigned value (or an element of it), the
        iterated container, or a parameter's arguments."""
        site = binding_site(self.source, store)
        if isinstance(site, cst.Param):
            return self._from_parameter(site, slot, steps)
        path = target_path(self.source, store, site)
        unknown = [Origin(store, steps, slot, known=False)]
        if isinstance(site, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)) and site.value is not None:
            if not path:
                return [(site.value, slot, steps)]
            return [(site.value, path[0], steps)] if len(path) == 1 and slot is None else unknown
        if isinstance(site, (cst.For, cst.CompFor)) and slot is None:
            iterable = site.iter
            if not path and not reads_keys(self.source, site):
                return [(iterable, ANY, steps)]
            if path == (1,) and isinstance(iterable, cst.Call):
                func = iterable.func
                if isinstance(func, cst.Attribute) and func.attr.value == "items":
                    return [(func.value, ANY, steps)]
                if "builtins.enumerate" in self.source.qualified(func) and iterable.args:
                    return [(iterable.args[0].value, ANY, steps)]
        return unknown

    def _from_parameter(self, param: cst.Param, slot: Slot, steps: tuple[Edge, ...]) -> list:
        function = next(a for a in self.source.ancestors(param) if isinstance(a, cst.FunctionDef))
        callers = self.callers(function)
        if self.is_self(param, function):
            if function.name.value == "__init__":
                return [Origin(call, (Edge("enter", call), *steps), slot) for call, _ in callers]
            return [
                (call.func.value, slot, (Edge("enter", call), *steps))
                for call, implicit in callers
                if implicit and isinstance(call.func, cst.Attribute)
            ]
        items: list = []
        for call, implicit in callers:
            argument = self.argument(call, function, implicit, param)
            if argument is not None:
                items.append((argument, slot, (Edge("enter", call), *steps)))
            elif param.default is not None:
                items.append((param.default, slot, steps))
        return items or [Origin(param.name, steps, slot, known=False)]

    def _container_puts(self, read: cst.Name, slot: Slot, steps: tuple[Edge, ...]) -> list:
        """``d["k"] = v``, ``nets.append(v)``: elements put in the container ``read`` names."""
        items: list = []
        for other in self.variable_reads(read):
            parent = self.source.parent(other)
            if isinstance(parent, cst.Subscript) and parent.value is other:
                site = binding_site(self.source, parent)
                key = subscript_key(parent)
                if isinstance(site, cst.Assign) and (slot == ANY or key is None or key == slot):
                    items.append((site.value, None, steps))
            elif isinstance(parent, cst.Attribute) and parent.value is other and parent.attr.value in ("append", "insert", "add", "extend"):
                call = self.source.parent(parent)
                if isinstance(call, cst.Call) and call.args:
                    items.append((call.args[-1].value, ANY if parent.attr.value == "extend" else None, steps))
        return items

    def key_choices(self, key: cst.BaseExpression) -> set[str | int] | None:
        """The literals a loop variable used as a key takes (``for phase in ["train", "val"]``)."""
        if not isinstance(key, cst.Name):
            return None
        stores = self.stores_reaching(key)
        site = binding_site(self.source, stores[0]) if len(stores) == 1 else None
        if isinstance(site, cst.For) and site.target is stores[0] and isinstance(site.iter, (cst.List, cst.Tuple, cst.Set)):
            choices = [literal(e.value) for e in site.iter.elements]
            return None if None in choices else set(choices)  # type: ignore[arg-type]
        return None


class _Forward:
    """One forward question: a breadth-first walk over the expressions holding the value."""

    def __init__(self, values: Values, outer: Step | None, returns: bool) -> None:
        self.values = values
        self.source = values.source
        self.outer = outer
        self.returns = returns
        self.containers: list[Containment] = []

    def run(self, start: cst.CSTNode, slot: Slot, prefix: tuple[Edge, ...]) -> Flow:
        occurrences: list[Occurrence] = []
        seen: set[tuple[cst.CSTNode, Slot]] = set()
        if binding_site(self.source, start) is not None:  # a bound name: what reads it
            queue: deque[_Item] = deque(self.store(start, slot, prefix, None))
        else:
            queue = deque([(start, slot, prefix, None)])
        budget = _BUDGET
        while queue and budget:
            budget -= 1
            node, slot, trail, key = queue.popleft()
            if (node, slot) in seen:
                continue
            seen.add((node, slot))
            if slot is None:
                occurrences.append(Occurrence(node, trail, key))  # type: ignore[arg-type]
            queue.extend(self.step(node, slot, trail, key))
        return Flow(tuple(occurrences), tuple(dict.fromkeys(self.containers)))

    def step(self, node: cst.CSTNode, slot: Slot, trail: tuple[Edge, ...], key: cst.BaseExpression | None) -> Iterable[_Item]:
        parent = self.source.parent(node)
        if slot is None and self.outer is not None:
            up = self.outer(self.source, node)
            if up is not None:
                return [(up, None, trail, key)]
        if isinstance(parent, cst.Assign) and parent.value is node:
            return [item for target in parent.targets for item in self.store(target.target, slot, trail, key)]
        if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.value is node:
            wider = [(parent, slot, trail, key)] if isinstance(parent, cst.NamedExpr) else []
            return [*self.store(parent.target, slot, trail, key), *wider]
        if isinstance(parent, cst.Element) and slot is not None and (paired := paired_target(self.source, parent)) is not None:
            return self.store(paired, slot, trail, key)  # (a, b), (c, d) = f(x), f(y)
        if isinstance(parent, (cst.Element, cst.StarredElement)) and slot is None:
            container = self.source.parent(parent)
            elements = list(getattr(container, "elements", ()))
            index = next(i for i, e in enumerate(elements) if e is parent)
            exact = isinstance(container, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in elements[:index])
            return self.contain(container, index if exact else ANY, trail, key)  # type: ignore[arg-type]
        if isinstance(parent, cst.DictElement) and parent.value is node and slot is None:
            found = literal(parent.key)
            return self.contain(self.source.parent(parent), ANY if found is None else found, trail, key)  # type: ignore[arg-type]
        if isinstance(parent, cst.DictComp) and parent.value is node and slot is None:
            return self.contain(parent, ANY, trail, key)
        if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and parent.elt is node and slot is None:
            self.containers.append(Containment("set" if isinstance(parent, cst.SetComp) else "list", parent, ANY))
            return [(parent, ANY, trail, key)]
        if isinstance(parent, cst.Return):
            return self.returned(parent, slot, trail, key)
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = self.source.parent(parent)
            return self.enter(call, parent, slot, trail, key) if isinstance(call, cst.Call) else []
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return self.method(parent, slot, trail, key)
        if isinstance(parent, cst.Subscript) and parent.value is node and slot is not None:
            found = subscript_key(parent)
            if found is None:  # a key known at run time only
                return [(parent, None, trail, subscript_index(parent))]
            return [(parent, None, trail, key)] if slot in (ANY, found) else []
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node and slot is not None:
            if reads_keys(self.source, parent):
                return []  # for name in nets: nets[name] -- a dict's keys, not the models
            target = parent.target
            if isinstance(node, cst.Call) and cstutil.attribute_name(node.func) == "items":  # for name, net in nets.items()
                pair = target.elements if isinstance(target, (cst.Tuple, cst.List)) else ()
                return self.store(pair[1].value, None, trail, key) if len(pair) == 2 else []
            return self.store(target, None, trail, key)
        if isinstance(parent, cst.IfExp) and node is not parent.test or isinstance(parent, cst.BooleanOperation):
            return [(parent, slot, trail, key)]
        return []

    def contain(self, container: cst.CSTNode, index: str | int, trail: tuple[Edge, ...], key: cst.BaseExpression | None) -> list[_Item]:
        self.containers.append(Containment(_CONTAINERS.get(type(container), "list"), container, index))
        return [(container, index, trail, key)]

    def store(self, target: cst.CSTNode, slot: Slot, trail: tuple[Edge, ...], key: cst.BaseExpression | None) -> list[_Item]:
        """The reads of what an assignment (or loop, or parameter) binds to the value."""
        values = self.values
        if isinstance(target, (cst.Name, cst.Param)):
            name = target.name if isinstance(target, cst.Param) else target
            frame = values.frame_of(name)
            return [
                (read, slot, trail + ((Edge("closure", name, read),) if values.frame_of(read) is not frame else ()), key)
                for read in values.reads_from(name)
            ]
        if isinstance(target, cst.Attribute):
            owner = values.attribute_owner(target)
            if owner is None:
                return []
            method = values.method_of(target)
            return [
                (read, slot, trail + ((Edge("attribute", target, read),) if where is not method else ()), key)
                for read, where in values.attribute_reads(owner, target.attr.value)
            ]
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            if isinstance(slot, int) and slot < len(elements) and not any(isinstance(e, cst.StarredElement) for e in elements):
                return self.store(elements[slot].value, None, trail, key)
            return []
        if isinstance(target, cst.Subscript) and slot is None:  # d["train"] = value
            found = subscript_key(target)
            index = ANY if found is None else found
            self.containers.append(Containment("dict" if isinstance(found, str) else "list", target.value, index))
            holder = target.value
            if isinstance(holder, cst.Name):
                return [(read, index, trail, key) for read in values.variable_reads(holder)]
            if isinstance(holder, cst.Attribute) and (owner := values.attribute_owner(holder)) is not None:
                return [(read, index, trail, key) for read, _ in values.attribute_reads(owner, holder.attr.value)]
        return []

    def returned(self, ret: cst.Return, slot: Slot, trail: tuple[Edge, ...], key: cst.BaseExpression | None) -> list[_Item]:
        values = self.values
        function = self.source.enclosing_function(ret)
        if function is None or values.is_generator(function):
            return []
        entered = values.entered_through(trail)
        if entered is not None and any(f is function for f, _ in values.callees(entered)):
            calls = [entered]
        elif self.returns:
            calls = [call for call, _ in values.callers(function)]
        else:
            return []
        return [(call, slot, (*trail, Edge("return", call)), key) for call in calls]

    def enter(self, call: cst.Call, arg: cst.Arg, slot: Slot, trail: tuple[Edge, ...], key: cst.BaseExpression | None) -> list[_Item]:
        """An argument of the file's own function: the reads of its parameter there."""
        items: list[_Item] = []
        for function, implicit in self.values.callees(call):
            param = self.values.parameter(call, function, implicit, arg)
            if param is not None:
                items += self.store(param, slot, (*trail, Edge("enter", call)), key)
        return items

    def method(self, attribute: cst.Attribute, slot: Slot, trail: tuple[Edge, ...], key: cst.BaseExpression | None) -> list[_Item]:
        """``d.values()`` / ``d.items()`` of a container; ``obj.method()`` of the file's class,
        where the value becomes ``self``."""
        call = self.source.parent(attribute)
        if not (isinstance(call, cst.Call) and call.func is attribute):
            return []
        if slot is not None:
            return [(call, slot, trail, key)] if attribute.attr.value in ("values", "items") else []
        items: list[_Item] = []
        for function, implicit in self.values.callees(call):
            params = [*function.params.posonly_params, *function.params.params]
            if implicit and params:
                items += self.store(params[0], None, (*trail, Edge("enter", call)), key)
        return items


def paired_target(source: Source, element: cst.Element) -> cst.BaseExpression | None:
    """The target that ``element`` of a tuple assigned to a tuple of the same length binds
    (``(train_sampler, train_loader), (_, val_loader) = build(train), build(val)``; ``g, d =
    Generator(), Discriminator()``)."""
    container = source.parent(element)
    assign = source.parent(container) if isinstance(container, (cst.Tuple, cst.List)) else None
    if not isinstance(container, (cst.Tuple, cst.List)) or not isinstance(assign, cst.Assign) or assign.value is not container:
        return None
    if len(assign.targets) != 1:
        return None
    target, elements = assign.targets[0].target, container.elements
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(elements):
        return None
    if any(isinstance(e, cst.StarredElement) for e in (*elements, *target.elements)):
        return None
    return target.elements[next(i for i, e in enumerate(elements) if e is element)].value


def target_path(source: Source, store: cst.CSTNode, site: cst.CSTNode | None) -> tuple[int, ...]:
    """Where ``store`` stands in an unpacking target: () for ``x = ...``, (1,) for ``a, x = ...``."""
    path: list[int] = []
    child, parent = store, source.parent(store)
    while parent is not None and parent is not site and not isinstance(parent, cst.AssignTarget):
        if isinstance(parent, (cst.Tuple, cst.List)):
            path.append(next(i for i, e in enumerate(parent.elements) if e is child))
        child, parent = parent, source.parent(parent)
    return tuple(reversed(path))


def held_spelling(occurrence: Occurrence, key: Slot) -> str | None:
    """The spelling of an expression holding the source; ``loaders["train"]`` for the
    ``"train"`` loader read as ``loaders[phase]``."""
    node = occurrence.node
    if occurrence.key is not None and isinstance(node, cst.Subscript) and isinstance(key, str):
        base = spelling(node.value)
        return f'{base}["{key}"]' if base is not None else None
    return spelling(node)


def comprehension_keys(comp: cst.DictComp) -> list[str | int]:
    """``["train", "val"]`` of ``{x: ... for x in ["train", "val"]}``; [] when not literal."""
    loop = comp.for_in
    if loop.inner_for_in is not None or loop.ifs or not isinstance(loop.target, cst.Name):
        return []
    if not (
        isinstance(comp.key, cst.Name) and comp.key.value == loop.target.value and isinstance(loop.iter, (cst.List, cst.Tuple, cst.Set))
    ):
        return []
    keys = [literal(e.value) for e in loop.iter.elements]
    return [] if None in keys else keys  # type: ignore[return-value]
