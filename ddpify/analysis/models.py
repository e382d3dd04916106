"""Models and what happens to them: the only definition of "the trained model" that the
converter and the linter share.

A model is an ``nn.Module`` instance whose parameters reach an optimizer (``Adam(m.parameters())``,
param groups, ``list(a.parameters()) + list(b.parameters())``, ``itertools.chain``, an optimizer
built by a function of the file that receives the model, ``self.parameters()`` in a method of
the model) or that is wrapped by DDP / DataParallel / ``ddpify.prepare_model``. Where it is
made is found by following the reference back (``Values.origins``); everything that happens to
it by following it forward from there (``Values.flow``) across functions, ``self.`` attributes
and containers: moves, loads, wraps, forward calls and calls of its own methods (which bypass
DDP's forward) on the training path (``DataFlow.on_training_path``), every use of a member a
DDP wrapper lacks, and the submodules its ``forward`` never uses. Where it is placed for good
is ``ModelFlow.last_placement``. A model built on alternative paths into one variable (``if
resume: ... else: ...``) is one model; two calls of one factory make two.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from ddpify.analysis.callgraph import binding_site
from ddpify.analysis.dataflow import DataFlow
from ddpify.analysis.dropped_outputs import dropped_outputs
from ddpify.analysis.holders import holding_construction
from ddpify.analysis.modules import (
    DATAPARALLEL,
    LOADS,
    MODULE_API,
    MOVES,
    WRAPS,
    indexed_submodules,
    is_module_class,
    model_inner,
    model_outer,
    registered_submodules,
    registers,
    unused_submodules,
    unwrapped,
)
from ddpify.analysis.optimizers import Optimizers
from ddpify.analysis.own_training import (
    Bypass,
    called_through_wrapper,
    feeds_no_training,
    parameter_free,
    routable_forwards,
    trains_itself,
)
from ddpify.analysis.placement import Placement, last_placement
from ddpify.analysis.source import Source
from ddpify.analysis.spellings import spelling
from ddpify.analysis.values import Edge, Occurrence, Origin, Slot
from ddpify.tree import cstutil


@dataclass(frozen=True)
class Site:
    """Where something happens: the call (or expression), its line, and its function
    (``Trainer.__init__``; None at module level)."""

    node: cst.CSTNode
    line: int
    function: str | None = None


@dataclass(frozen=True)
class Model:
    """One model. ``key``: how the optimizer (or wrap) refers to it (for ``self.parameters()``
    in its own class, how the code outside names it); ``references``: every
    spelling that holds it. ``parts``: the submodules given to the optimizer when not the whole
    model. ``container``: "list" / "dict" / "tuple" / "set" when it is held in one (then
    refer to it through ``references``). ``bypasses``: own-member calls on the training path;
    ``own_uses``: every use of a member a DDP wrapper lacks (see ``Bypass``). ``handoffs``: calls
    of code defined elsewhere that receive it (they may move or load it unseen). ``unknown``:
    what could not be established; ``parameters``: the function parameters among its unknown
    origins (a model handed in by a caller this file does not show)."""

    key: str
    references: tuple[str, ...]
    constructed_at: tuple[Site, ...]
    optimizers: tuple[Site, ...]
    parts: tuple[str, ...]
    moves: tuple[Site, ...]
    loads: tuple[Site, ...]
    wraps: tuple[Site, ...]
    container: str | None
    forward_calls: tuple[Site, ...]
    bypasses: tuple[Bypass, ...]
    own_uses: tuple[Bypass, ...]
    possibly_unused: tuple[str, ...]
    handoffs: tuple[Site, ...]
    unknown: tuple[str, ...]
    class_def: cst.ClassDef | None
    occurrences: tuple[Occurrence, ...]
    parameters: tuple[cst.Param, ...] = ()  # the function parameters it may come from (unknown origins)
    routed: tuple[cst.Call, ...] = ()  # ``self(x)`` in its own training methods: to run through the DDP wrapper
    through: tuple[cst.Call, ...] = ()  # ``model.log_probs(x)`` on the training path: to run as the wrapper's forward
    through_whole: bool = True  # each of ``through`` provably runs the whole model (else find_unused_parameters)
    indexed: tuple[str, ...] = ()  # module lists its forward reads at run-time indexes only (``modules.indexed_submodules``)
    dropped: tuple[str, ...] = ()  # submodule outputs its forward drops (``dropped_outputs.dropped_outputs``)
    submodules: tuple[str, ...] | None = None  # all it registers, when known (``modules.registered_submodules``)
    trained_inside: str | None = None  # the model that keeps it as a submodule and runs it (``holders``)


@dataclass
class _Group:
    """Claims (optimizer owners, wrap arguments) that turned out to be one model."""

    anchors: set[tuple[cst.CSTNode, Slot]]
    keys: list[str]
    optimizers: list[Site]
    parts: list[str]
    origins: list[Origin]
    segments: list[tuple[cst.CSTNode, Slot, tuple[Edge, ...], bool]]


class ModelFlow:
    """The models of one file, computed on first use."""

    def __init__(self, source: Source, dataflow: DataFlow | None = None) -> None:
        self.source = source
        self.dataflow = dataflow or DataFlow(source)
        self.values = self.dataflow.values
        self.optimizers = Optimizers(self.values)
        self._unknown: list[str] = []
        self._made: dict[Model, list[cst.CSTNode]] = {}  # per model: where each construction first holds it
        self._placements: dict[Model, Placement] = {}

    @functools.cached_property
    def models(self) -> list[Model]:
        models = [self._model(group) for group in self._groups()]
        held = {m: h for m in models if not m.forward_calls and not m.wraps and (h := holding_construction(self.values, m.occurrences))}
        while held:  # the holder is claimed with the held model as a part (``holders``), if the training runs it
            claims = [(call, site, (attribute,)) for m, (call, attribute) in held.items() for site in m.optimizers]
            self._unknown = []
            regrouped = [self._model(group) for group in self._groups(claims)]
            holders = {call: m for m in regrouped for call, _ in held.values() if any(s.node is call for s in m.constructed_at)}
            running = {m: h for m, h in held.items() if h[0] in holders and holders[h[0]].forward_calls}
            if running != held:
                held = running
                continue
            return [self._held(m, held, holders) for m in regrouped]
        return models

    def _held(self, model: Model, held: dict[Model, tuple[cst.Call, str]], holders: dict[cst.Call, Model]) -> Model:
        """``model`` marked as trained inside its holder, if it is a held one."""
        call = next((c for m, (c, _) in held.items() if (m.key, m.constructed_at) == (model.key, model.constructed_at)), None)
        if call is None:
            return model
        replaced = dataclasses.replace(model, trained_inside=holders[call].key)
        self._made[replaced] = self._made[model]
        return replaced

    @property
    def unknown(self) -> tuple[str, ...]:
        """What this file does not tie to a model, with the reason: an optimizer given
        parameters from elsewhere, one built by code defined elsewhere, a backward with no
        optimizer."""
        self.models  # noqa: B018 - computed with the models
        return tuple(self._unknown)

    def model_of(self, what: cst.CSTNode | str) -> Model | None:
        """The model an expression evaluates to, or a spelling names (``"self.model"``)."""
        for model in self.models:
            if isinstance(what, str):
                if what in model.references or what == model.key:
                    return model
            elif any(o.node is what for o in model.occurrences):
                return model
        return None

    def last_placement(self, model: Model) -> Placement:
        """The statement after which ``model`` is on its final device and loaded: where a wrap
        belongs (see ``ddpify.analysis.placement``)."""
        found = self._placements.get(model)
        if found is None:
            changes = [s.node for s in (*model.moves, *model.loads)]
            constructions = self._made.get(model, [s.node for s in model.constructed_at])
            wraps = [s.node for s in model.wraps if not self.source.qualified(s.node.func) & DATAPARALLEL]  # type: ignore[attr-defined]
            loads = [s.node for s in model.loads]
            found = last_placement(self.values, self.dataflow.on_training_path, model.occurrences, constructions, changes, wraps, loads)
            self._placements[model] = found
        return found

    # ------------------------------------------------------------------ discovery
    def _groups(self, held: Sequence[tuple[cst.BaseExpression, Site | None, tuple[str, ...]]] = ()) -> list[_Group]:
        """``held``: holders claimed for the models they keep (``holders``)."""
        groups: list[_Group] = []
        claims: list[tuple[cst.BaseExpression, Site | None, tuple[str, ...]]] = []
        for optimizer in self.optimizers.calls:
            owners = self.optimizers.owners(optimizer)
            if not owners:
                given = cstutil.code(optimizer.args[0].value)[:50] if optimizer.args else "nothing"
                self._unknown.append(
                    f"the optimizer at line {self.source.line(optimizer)} gets {given}, which this file does not tie to a model"
                )
            claims += [(owner, self._site(optimizer), parts) for owner, parts in owners]
        claims += [(argument, None, ()) for argument in self.optimizers.wrapped]
        claims += held
        for reference, stepped, parts in claims:
            found = self.values.origins(reference, inner=model_inner)
            origins = [o for o in found if o.known or not self._never_passed(o)] or found  # all of them where none runs
            segments = [segment for origin in origins for segment in _segments(origin)]
            anchors = {(start, slot) for start, slot, _, last in segments if last}
            group = next((g for g in groups if g.anchors & anchors), None)
            if group is None:
                group = _Group(set(), [], [], [], [], [])
                groups.append(group)
            group.anchors |= anchors
            named = spelling(reference) or ("" if any(reference is c for c, _, _ in held) else cstutil.code(reference)[:40])
            group.keys.append(named)  # a holder is named where it is used
            group.optimizers += [stepped] if stepped is not None else []
            group.parts += [p for p in parts if p not in group.parts]
            group.origins += [o for o in origins if o not in group.origins]
            group.segments += [s for s in segments if s not in group.segments]
        self._unknown += self.optimizers.built_elsewhere()
        return self._merge([g for g in groups if g.anchors])

    def _merge(self, groups: list[_Group]) -> list[_Group]:
        """Models assigned to the same variable in the same frame are one model built on
        alternative paths (``if resume: head = load() else: head = Net()``)."""
        merged: list[tuple[_Group, set]] = []
        for group in groups:
            bound = self._variables(group)
            into = next((pair for pair in merged if pair[1] & bound), None)
            if into is None:
                merged.append((group, bound))
                continue
            target, names = into
            names |= bound
            target.anchors |= group.anchors
            target.keys += [k for k in group.keys if k not in target.keys]
            target.optimizers += group.optimizers
            target.parts += [p for p in group.parts if p not in target.parts]
            target.origins += [o for o in group.origins if o not in target.origins]
            target.segments += [s for s in group.segments if s not in target.segments]
        return [group for group, _ in merged]

    def _variables(self, group: _Group) -> set[tuple[str, cst.CSTNode | None, str]]:
        """The variables and ``self.`` attributes the model is assigned to in its own frames."""
        found: set[tuple[str, cst.CSTNode | None, str]] = set()
        for start, slot, prefix, last in group.segments:
            for occurrence in self.values.flow(start, slot, outer=model_outer, returns=last, prefix=prefix).occurrences:
                parent = self.source.parent(occurrence.node)
                if len(occurrence.trail) != len(prefix) or not isinstance(parent, cst.Assign) or parent.value is not occurrence.node:
                    continue
                for target in (t.target for t in parent.targets):
                    if isinstance(target, cst.Name):
                        found.add(("name", self.values.scope_of(target), target.value))
                    elif isinstance(target, cst.Attribute) and (owner := self.values.attribute_owner(target)) is not None:
                        found.add(("attribute", owner, target.attr.value))
        return found

    # ------------------------------------------------------------------ one model
    def _model(self, group: _Group) -> Model:
        occurrences: dict[cst.CSTNode, Occurrence] = {}
        containers: list[str] = []
        constructions: list[cst.CSTNode] = []  # the calls that make it
        made_at: list[cst.CSTNode] = []  # where it first exists as itself (not as an element of what a call made)
        for start, slot, prefix, last in group.segments:
            flow = self.values.flow(start, slot, outer=model_outer, returns=last, prefix=prefix)
            for occurrence in flow.occurrences:
                occurrences.setdefault(occurrence.node, occurrence)
            containers += [c.kind for c in flow.containers if self._stored(c.node)]
            making = [o for o in group.origins if o.node is start and o.slot == slot and o.known and isinstance(start, cst.Call)]
            if making and (slot is None or flow.occurrences):  # an element of what a call makes: where it is read out
                constructions.append(start)
                made_at.append(start if slot is None else flow.occurrences[0].node)
        class_def = next((k for c in constructions if isinstance(c, cst.Call) and (k := self.values.class_called(c)) is not None), None)
        uses = _Uses()
        references = tuple(dict.fromkeys(s for o in occurrences.values() if (s := spelling(o.node)) is not None))
        for occurrence in occurrences.values():
            self._classify(occurrence.node, class_def, uses, references)
        built = [c for c in constructions if isinstance(c, cst.Call)]
        bypasses = [b for b in self._bypasses(uses) if not feeds_no_training(self.source, self.dataflow.batches, b.node, class_def, built)]
        routed = {b: forwards for b in bypasses if (forwards := self._routed(b, class_def))}
        forwarding = {self.source.enclosing_function(site.node) for site in uses.forwards}
        left = [b for b in bypasses if b not in routed]
        through, through_whole = called_through_wrapper(self.values, left, forwarding, class_def, built) if left else ((), True)
        unknown = [self._unknown_origin(o) for o in group.origins if not o.known]
        module_class = class_def is not None and is_module_class(self.values, class_def)
        unused = unused_submodules(self.values, class_def) if class_def is not None and module_class else ()
        indexed = indexed_submodules(self.values, class_def) if class_def is not None and module_class else ()
        dropped = dropped_outputs(self.values, class_def) if class_def is not None and module_class else ()
        submodules = registered_submodules(self.values, class_def) if class_def is not None and module_class else None
        if class_def is None:  # built by a class or a function of the project's modules
            unused = next((u for c in constructions if isinstance(c, cst.Call) and (u := self._project_unused(c))), ())
            helpers = [h for c in constructions if isinstance(c, cst.Call) and (h := self.source.project_call(c)) is not None]
            dropped = next((h.dropped_outputs for h in helpers if h.dropped_outputs), ())
            known = {h.submodules for h in helpers}
            submodules = known.pop() if len(constructions) == len(helpers) and len(known) == 1 else None
        model = Model(
            key=_outside_name(group.keys[0], references),
            references=references,
            constructed_at=tuple(self._site(c) for c in sorted(constructions, key=self.values.start)),
            optimizers=tuple(dict.fromkeys(group.optimizers)),
            parts=tuple(group.parts),
            moves=_ordered(uses.moves, self.values.end),
            loads=_ordered(uses.loads, self.values.end),
            wraps=_ordered(uses.wraps, self.values.end),
            container=containers[0] if containers else "list" if uses.collected else None,
            forward_calls=_ordered(uses.forwards, self.values.end),
            bypasses=tuple(sorted((b for b in left if b.node not in through), key=lambda b: (b.line, self.values.end(b.node)))),
            own_uses=tuple(sorted(uses.own, key=lambda b: (b.line, self.values.end(b.node)))),
            possibly_unused=unused,
            indexed=indexed,
            dropped=dropped,
            submodules=submodules,
            handoffs=_ordered(uses.handoffs, self.values.end),
            unknown=tuple(unknown),
            class_def=class_def,
            occurrences=tuple(occurrences.values()),
            parameters=tuple(p for o in group.origins if not o.known and isinstance(p := binding_site(self.source, o.node), cst.Param)),
            routed=tuple(dict.fromkeys(c for forwards in routed.values() for c in forwards)),
            through=through,
            through_whole=through_whole,
        )
        self._made[model] = made_at
        return model

    def _project_unused(self, call: cst.Call) -> tuple[str, ...]:
        """The submodules a model built by a project helper never uses in ``forward``."""
        helper = self.source.project_call(call)
        return helper.unused_submodules if helper is not None else ()

    def _classify(self, node: cst.CSTNode, class_def: cst.ClassDef | None, uses: _Uses, references: tuple[str, ...]) -> None:
        """What one expression holding the model (spelled as ``references``) does with it."""
        parent = self.source.parent(node)
        inside = class_def is not None and self.values.inside(node, class_def)  # the model's own code
        inner = unwrapped(self.source, node)
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value != "module":
            chain, top = [parent.attr.value], parent
            while isinstance(above := self.source.parent(top), cst.Attribute) and above.value is top:
                chain.append(above.attr.value)
                top = above
            above = self.source.parent(top)
            call = above if isinstance(above, cst.Call) and above.func is top else None
            if call is not None and chain in (["to"], ["cuda"], ["cpu"], ["load_state_dict"]):
                (uses.moves if chain[0] in MOVES else uses.loads).append(self._site(call))
                return
            if not inside and chain[0] not in MODULE_API:
                uses.own.append(Bypass(parent, self.source.line(parent), chain[0], inner, call is not None))
            if inside or call is None or not self._trains(call, references):
                return
            elif chain == ["forward"] and not inner:
                uses.forwards.append(self._site(call))
            elif self._own_call(chain, class_def):
                uses.bypasses.append(Bypass(call, self.source.line(call), ".".join(chain), inner))
        elif isinstance(parent, cst.Call) and parent.func is node:
            if inside or not self._trains(parent, references):
                return
            if inner:
                uses.bypasses.append(Bypass(parent, self.source.line(parent), "forward", True))
            else:
                uses.forwards.append(self._site(parent))
        elif isinstance(parent, cst.Arg) and parent.value is node and isinstance(given := self.source.parent(parent), cst.Call):
            qualified = self.source.qualified(given.func)
            if qualified & WRAPS:
                uses.wraps.append(self._site(given))
            elif qualified & LOADS:
                uses.loads.append(self._site(given))
            elif (
                isinstance(given.func, cst.Attribute)
                and given.func.attr.value in _COLLECTING
                and not any(q.split(".")[0] in ("torch", "ddpify") for q in qualified)
            ):
                uses.collected.append(self._site(given))  # models.append(model): kept in a list the flow does not follow
            elif not self.values.callees(given) and not any(q.split(".")[0] in ("builtins", "torch", "ddpify") for q in qualified):
                uses.handoffs.append(self._site(given))

    def _bypasses(self, uses: _Uses) -> list[Bypass]:
        """Own-method calls that really bypass DDP: in a function whose step also runs a forward
        through the wrapper (``hidden = model.init_hidden(n)`` then ``model(x, hidden)``), the
        forward arms DDP's reducer and the backward's hooks average every parameter's gradient,
        those the method touched too; only a step with no such forward averages nothing. Calls
        of the inner module's forward (``model.module(x)``) always count."""
        forwarding = {self.source.enclosing_function(site.node) for site in uses.forwards}
        return [
            b
            for b in uses.bypasses
            if b.through_module or b.method.split(".")[-1] == "forward" or self.source.enclosing_function(b.node) not in forwarding
        ]

    def _routed(self, bypass: Bypass, class_def: cst.ClassDef | None) -> tuple[cst.Call, ...]:
        """``model.train_(x, y)``: the ``self(...)`` calls of that method of the model's class
        that can run through the DDP wrapper (``own_training.routable_forwards``)."""
        if class_def is None or bypass.through_module or "." in bypass.method or not is_module_class(self.values, class_def):
            return ()
        method = self.values.method(class_def, bypass.method)
        if method is None or not trains_itself(self.source, method):
            return ()  # run whole as the wrapper's forward instead (``called_through_wrapper``)
        return routable_forwards(self.values, class_def, bypass.method)

    def _trains(self, call: cst.Call, references: tuple[str, ...]) -> bool:
        """On the training path, with gradients (not under no_grad, not after its own ``.eval()``)."""
        batches = self.dataflow.batches
        return (
            self.dataflow.on_training_path(call) and batches.no_grad_around(call) is None and batches.eval_before(call, references) is None
        )

    def _own_call(self, chain: list[str], klass: cst.ClassDef | None) -> bool:
        """``model.encode(...)``, ``model.encoder(...)``, ``model.x.forward(...)``: the model's
        own code, not DDP's forward. Deeper chains (``model.stride.max()``) only through a
        submodule the model's class registers (``model.backbone.layer1(x)``)."""
        if chain[-1] == "forward":
            return True
        if len(chain) == 1:
            return chain[0] not in MODULE_API and not (klass is not None and parameter_free(self.values, klass, chain[0]))
        if klass is None or chain[0] in MODULE_API:
            return False
        stores = self.values.attribute_stores(klass, chain[0])
        return any(registers(self.values, binding_site(self.source, s)) for s, _ in stores)

    def _stored(self, container: cst.CSTNode) -> bool:
        """A container kept in a variable (``nets = [a, b]``, ``models["g"] = g``), not one
        built for a call, a return or an unpacking (``torch.save({"net": net})``)."""
        parent = self.source.parent(container)
        if isinstance(parent, cst.Subscript):
            return True
        if isinstance(parent, cst.AnnAssign):
            return True
        return isinstance(parent, cst.Assign) and all(isinstance(t.target, (cst.Name, cst.Attribute)) for t in parent.targets)

    def _never_passed(self, origin: Origin) -> bool:
        """A parameter of a function nothing runs (``Source.never_runs``): no model comes from it
        beside one that does (where every origin is such, the code is a library's, kept as is)."""
        site = binding_site(self.source, origin.node)
        function = self.source.enclosing_function(site) if isinstance(site, cst.Param) else None
        return function is not None and self.source.never_runs(function)

    def _unknown_origin(self, origin: Origin) -> str:
        node = origin.node
        site = binding_site(self.source, node)
        if isinstance(site, cst.Param):
            function = self.source.enclosing_function(site)
            name = self.values.name_of(function) if function is not None else "?"
            return f"it may be the parameter {cstutil.code(node)} of {name}(), which no call in this file passes"
        return f"it may come from {cstutil.code(node)[:50]} at line {self.source.line(node)}, which this file does not show"

    def _site(self, node: cst.CSTNode) -> Site:
        function = self.source.enclosing_function(node)
        return Site(node, self.source.line(node), self.values.name_of(function) if function is not None else None)


# list.append / insert, set.add: the model goes into a container held elsewhere (self.models)
_COLLECTING = frozenset({"append", "insert", "add"})


@dataclass
class _Uses:
    own: list[Bypass] = field(default_factory=list)
    moves: list[Site] = field(default_factory=list)
    loads: list[Site] = field(default_factory=list)
    wraps: list[Site] = field(default_factory=list)
    forwards: list[Site] = field(default_factory=list)
    bypasses: list[Bypass] = field(default_factory=list)
    handoffs: list[Site] = field(default_factory=list)
    collected: list[Site] = field(default_factory=list)


def _outside_name(key: str, references: tuple[str, ...]) -> str:
    """The model's name where it is used, not ``self`` of its own class (``Adam(self.parameters())``
    in ``__init__`` names the model ``self``; the script calls it ``model``)."""
    if key not in ("self", ""):
        return key
    return next((r for r in references if r != "self"), key)


def _ordered(sites: list[Site], order) -> tuple[Site, ...]:
    """In the order they run on one line too (``model.decode(model.encode(x))``: encode first)."""
    return tuple(sorted(dict.fromkeys(sites), key=lambda s: (s.line, order(s.node))))


def _segments(origin: Origin) -> list[tuple[cst.CSTNode, Slot, tuple[Edge, ...], bool]]:
    """Where to follow a model made at ``origin`` from: the origin, then each call a function
    returns it to (``model = build()``), innermost first, each as a frame entered from the
    next; only the outermost follows returns further. The outermost start is the model's
    identity: two calls of one ``build()`` make two models."""
    stack: list[cst.CSTNode] = []
    returned: list[cst.CSTNode] = []
    for edge in origin.steps:
        if edge.kind == "enter":
            stack.append(edge.site)
        elif edge.kind == "return":
            if stack:
                stack.pop()
            else:
                returned.append(edge.site)
    starts = [origin.node, *returned]
    frames = [tuple(Edge("enter", c) for c in reversed(returned[i:])) for i in range(len(starts))]
    return [(start, origin.slot, frames[i], i == len(returned)) for i, start in enumerate(starts)]
