"""Where each trained model is wrapped, decided by the shared model analysis
(``ddpify.analysis.models``): after its last placement (construction, move, load; across
functions and classes: ``self.model = model.to(gpu_id)`` in a ``Trainer.__init__``), then
past the statements that only configure it, before the first one that trains or hands it on.

A model the analysis cannot wrap safely is *held*: not wrapped, reported once with the
reason, and the loaders it trains on stay unsharded (``loaders.hold_back``): a sharded loader
without averaged gradients would let every rank train its own model. Held are models trained
through their own methods (``model.encode(x)`` on the training path, which bypasses DDP's
forward), models kept in a container, and models whose last placement is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from ddpify import snippets
from ddpify.analysis.callgraph import binding_site
from ddpify.analysis.models import Model
from ddpify.analysis.modules import DATAPARALLEL, WRAPS
from ddpify.analysis.own_training import Bypass
from ddpify.analysis.values import Values, paired_target
from ddpify.convert.fact_types import Facts, HeldModel, NodeRewrite, item
from ddpify.convert.planners import constructor_wraps, container_wraps, wrap_options
from ddpify.convert.planners.wrap_options import ON_RANK_DEVICE
from ddpify.convert.record import Recording
from ddpify.convert.rewrites import RT
from ddpify.findings import Change
from ddpify.tree.cstutil import code, is_simple_reference

# (body, index of the statement the wrap follows, key) -> (anchor, "before" | "after")
Spot = Callable[[Sequence[cst.CSTNode], int, str], tuple[cst.CSTNode, str]]


def analysed(recording: Recording, optimizer: cst.Call, key: str) -> Model | None:
    """The analysis' model behind ``key``, trained by ``optimizer`` (``encoder`` for the key
    ``encoder.head`` when only that part is given to it)."""
    for model in recording.analysis.models.models:
        if not any(site.node is optimizer for site in model.optimizers):
            continue
        spellings = {model.key, *model.references}
        if key in spellings or any(key == f"{s}.{part}" for s in spellings for part in model.parts):
            return model
    return None


def already_wrapped(recording: Recording, model: Model) -> bool:
    """Wrapped by DDP or ``ddpify.prepare_model`` already (not by DataParallel, which the
    conversion removes)."""
    return any(isinstance(w.node, cst.Call) and not recording.qualified(w.node.func) & DATAPARALLEL for w in model.wraps)


def plan(recording: Recording, facts: Facts, model: Model, key: str, spot: Spot) -> cst.BaseExpression | None:
    """Wrap ``model`` (``Facts.model_wraps``) or hold it (``Facts.held_models``); returns the
    reference it is wrapped as, None when held or wrapped already."""
    flow = recording.analysis.models
    values = flow.values
    if already_wrapped(recording, model):
        return None  # ddpify.prepare_model / DDP already: a converted or distributed script
    if model.trained_inside is not None:
        why = (
            f"{key} trains inside {model.trained_inside} (its forward runs {key}): the wrap of {model.trained_inside} averages "
            f"{key}'s gradients, so {key} is not wrapped on its own (a wrapper of its own would never run)"
        )
        facts.changes.append(Change(_line(recording, model), why))
        facts.model_keys.discard(key)  # a plain module: nothing to unwrap
        return None
    called_parts = {b.method for b in model.bypasses} & set(model.parts)
    if called_parts and not model.forward_calls and model.class_def is None:  # engine.model(x): a part is the model
        part = f"{model.key}.{sorted(called_parts)[0]}"
        why = f"{part} is trained, and nothing in this file builds, moves or loads it ({model.key} comes from code this file does not show)"
        _hold(recording, facts, model, part, why)
        return None
    if model.bypasses:
        _hold_for_bypasses(recording, facts, model, key, model.bypasses)
        return None
    containers = [
        s.node for s in model.constructed_at if isinstance(s.node, cst.Call) and recording.qualified(s.node.func) & _MODULE_CONTAINERS
    ]
    if containers:  # nn.ModuleList has no forward: a DDP wrapper around it would average nothing
        kind = code(containers[0].func)
        why = f"{key} is a {kind}, which has no forward: DDP cannot wrap it (no forward would go through the wrapper)"
        todo = (
            f"wrap each module in {key} that the training calls (model = ddpify.prepare_model(model)) before it goes into "
            f"{key} or any other list, and give the optimizer {key}.parameters() as before; then convert again"
        )
        _hold(recording, facts, model, key, why, todo)
        return None
    if model.container is not None and _trained_through_container(recording, model):
        if _wrap_elements(recording, facts, model, key):
            return None
        why = f"{key} is kept in a {model.container} and trained through it, so ddpify cannot follow every reference to it"
        todo = (
            f"wrap each model before it goes into the {model.container} (model = ddpify.prepare_model(model), once it is on "
            "its final device and loaded), then convert again: its training loaders are sharded once it is wrapped"
        )
        _hold(recording, facts, model, key, why, todo)
        return None
    if _read_out_of_containers(recording, model):  # for m in models.values(): trained through what the dict holds
        if not _wrap_elements(recording, facts, model, key):
            holder = _container_name(model.constructed_at[0].node)
            why = f"{key} is read out of {holder}, and ddpify does not see every model that goes into {holder}"
            todo = f"wrap each model before it goes into {holder} (model = ddpify.prepare_model(model)), then convert again"
            _hold(recording, facts, model, key, why, todo)
        return None
    placement = flow.last_placement(model)
    statement = placement.statement
    if statement is None:
        if _wrap_handed_in(recording, facts, model, key, spot) or container_wraps.plan(recording, facts, model):
            return None
        inits = constructor_wraps.constructors(recording, model, key)
        if inits is not None:
            bypasses = constructor_wraps.bypasses(recording, key, inits)
            if bypasses:  # `self.gen_a.encode(x)` (MUNIT): a method of its own runs around the wrapper's forward
                _hold_for_bypasses(recording, facts, model, key, bypasses)
                facts.kept_attributes.update(b.node.func for b in bypasses if isinstance(b.node, cst.Call))
                return None
            constructor_wraps.plan(recording, facts, model, key, inits)
            return cst.parse_expression(key)
        reason = model.unknown[0] if model.unknown else placement.reason
        _hold(recording, facts, model, key, f"ddpify cannot tell where {key} is on its final device and loaded: {reason}")
        return None
    spelling = _spelling(recording, model, statement)
    if spelling is None:  # Trainer(Net(), ...): first named where the call keeps it (self.model = model)
        statement, spelling = _kept_by_callee(recording, model, statement)
    block = recording.parent(statement) if statement is not None else None
    body: list[cst.CSTNode] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    if (spelling is None or statement not in body) and container_wraps.plan(recording, facts, model):
        return None
    if spelling is None or statement not in body:
        _hold(
            recording, facts, model, key, f"ddpify finds no name for {key} where it is on its final device and loaded ({placement.reason})"
        )
        return None
    index = body.index(statement)
    while True:
        configured = []  # a def runs nothing here: an optimizer built inside one is built after the wrap anyway
        for i, s in enumerate(body):
            if i <= index or isinstance(s, (cst.FunctionDef, cst.ClassDef)) or not any(values.inside(o.node, s) for o in model.optimizers):
                continue
            if _configuring_block(s) is None and _uses_beyond_optimizers(values, model, s):
                break  # an epoch loop that rebuilds the optimizer and trains: the wrap goes before it
            configured.append(i)
        inner = _configuring_block(body[configured[-1]]) if configured else None
        if inner is None:
            break
        # the optimizer is built inside the block that also trains (`if __name__ == "__main__":`
        # builds it, then calls train(model, ...)): the wrap goes in there, after it
        body, index = inner, -1
    last = max([index, *configured])
    name = _trained_name(recording, model, body[last] if last >= 0 else statement, code(spelling))
    anchor, where = spot(body, last, name)  # after its optimizer too: DDP sees the final requires_grad flags
    facts.model_wraps.append((name, anchor, where))
    wrap_options.unused_parameters(recording, facts, model, name, anchor)
    wrap_options.route_own_training(recording, facts, model, name)
    wrap_options.run_through_wrapper(recording, facts, model, name, anchor)
    return spelling


def _wrap_handed_in(recording: Recording, facts: Facts, model: Model, key: str, spot: Spot) -> bool:
    """``def train(config, model, train_iter, ...)`` (or a method: Deep-SVDD's
    ``DeepSVDDTrainer.train(self, dataset, net)``) of a module the entry script's conversion
    converts alongside: the model is a parameter no call in this file passes, built and moved
    by the other files of the project that call ``train``. It is wrapped where ``train``
    receives it (after the optimizer built there from it, if any), so every call trains the DDP
    model, whichever caller built it (a load into it then goes through ``ddpify.load_state_dict``
    into the same parameters on every rank). Not when ``train`` moves it (the wrap would have to
    follow the move, in an order this file may not fix), nor when this file calls ``train``."""
    source = recording.analysis.source
    functions = {source.enclosing_function(p) for p in model.parameters}
    function = functions.pop() if len(functions) == 1 and len(model.parameters) == 1 else None
    parameter = model.parameters[0].name.value if model.parameters else None
    if function is None or parameter != key or model.constructed_at or model.moves or model.container:
        return False
    if source.call_sites(function) or source.enclosing_function(function) is not None:
        return False
    names = [p.name.value for p in function.params.params]
    index = names.index(parameter) - (1 if source.is_method(function) else 0)  # `self.trainer.train(dataset, net)`
    if index < 0 or source.project.passed_elsewhere(function.name.value, parameter, index) is None:
        return False  # no other file of the project calls it: nothing to rely on
    body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    if not body:
        return False
    values = recording.analysis.models.values
    configured = [i for i, s in enumerate(body) if any(values.inside(o.node, s) for o in model.optimizers)]
    first = 0 if function.get_docstring() is not None else -1
    anchor, where = spot(body, max([first, *configured]), key)
    facts.model_wraps.append((key, anchor, where))
    wrap_options.unused_parameters(recording, facts, model, key, anchor)
    return True


def _wrap_elements(recording: Recording, facts: Facts, model: Model, key: str) -> bool:
    """A model trained through the dict or list it is built into (``models = {"a": Net(),
    "b": Net2()}``, ``nets.append(Net().to(device))``) is wrapped where it goes in: every
    reference the container hands out is then the DDP model, however the loop reads it. A later
    move (``for m in models.values(): m.to(device)``) finds it on this rank's device
    already (``on_rank_device``); an in-place load after the wrap is right as it is."""
    found: list[cst.BaseExpression | None] = []
    for site in model.constructed_at:
        stored = _stored_elements(recording, site.node)
        found += stored if stored is not None else [_element(recording, site.node)]
    elements = [e for e in found if e is not None]
    if not elements or len(elements) < len(found):
        return False
    values = recording.analysis.models.values
    moved_later = any(not any(values.inside(move.node, e) for e in elements) for move in model.moves)
    options = ON_RANK_DEVICE if moved_later else ""  # under CUDA on this rank's GPU first: the later move moves nothing
    container = model.container or "container"
    for element in elements:
        if isinstance(element, cst.Call) and recording.qualified(element.func) & WRAPS:
            continue  # converted already
        facts.node_rewrites[element] = NodeRewrite(
            lambda node: snippets.expression("prepare_model_call", rt=RT, model=code(node), options=options),
            f"wrap the model for DDP where it goes into the {container} that trains it: "
            f"ddpify.prepare_model({_short(element)}{', ' + options if options else ''})"
            + (" (it is moved later: under CUDA it goes to this rank's GPU first, so that move moves nothing)" if options else ""),
        )
    facts.container_wraps.append(key)
    return True


def _read_out_of_containers(recording: Recording, model: Model) -> bool:
    """Every construction the analysis found is a read-out of a named container
    (``models.values()``, ``nets``): the model is what its elements hold."""
    return bool(model.constructed_at) and all(_container_name(site.node) is not None for site in model.constructed_at)


def _container_name(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("values", "items"):
        node = node.func.value
        return node.value if isinstance(node, cst.Name) else None
    return None


def _stored_elements(recording: Recording, read_out: cst.CSTNode) -> list[cst.BaseExpression | None] | None:
    """What goes into the container ``read_out`` reads (``models["a"] = Net()``, the values
    of the literal it is bound to, ``models.append(Net())``), None if ``read_out`` is none;
    an element that is not a construction ddpify can wrap is None."""
    name = _container_name(read_out)
    if name is None:
        return None
    source = recording.analysis.source
    scope = recording.function_of(read_out)
    stored: list[cst.BaseExpression | None] = []
    for node, value in source.assignments.get(name, []):
        if recording.function_of(node) is not scope:
            continue
        if isinstance(value, cst.Dict):
            stored += [e.value if isinstance(e, cst.DictElement) else None for e in value.elements]
        elif isinstance(value, (cst.List, cst.Tuple)):
            stored += [e.value if isinstance(e, cst.Element) else None for e in value.elements]
        elif not (isinstance(value, cst.Call) and code(value.func) in ("dict", "list") and not value.args):
            stored.append(None)  # models = build_models(): what it holds is not seen here
    for assign in source.of_types(cst.Assign):
        assert isinstance(assign, cst.Assign)
        if any(isinstance(t.target, cst.Subscript) and code(t.target.value) == name for t in assign.targets):
            stored.append(assign.value if recording.function_of(assign) is scope else None)
    for call in source.calls_by_callee.get("append", []):
        if isinstance(call.func, cst.Attribute) and code(call.func.value) == name and call.args:
            stored.append(call.args[0].value if recording.function_of(call) is scope else None)
    return [e if e is not None and _element(recording, e) is e else None for e in stored] if stored else [None]


def _element(recording: Recording, construction: cst.CSTNode) -> cst.BaseExpression | None:
    """The whole expression a construction is stored into a container as (``Net().to(d)``
    of ``{"a": Net().to(d)}``, ``models[k] = Net()``, ``nets.append(Net())``), else None;
    never a name (``nets.append(net)``: ``net`` may also be trained directly)."""
    if not isinstance(construction, cst.Call):
        return None
    node = construction
    while True:
        parent = recording.parent(node)
        above = recording.parent(parent) if parent is not None else None
        if isinstance(parent, cst.Attribute) and parent.attr.value in _SAME_MODEL and isinstance(above, cst.Call) and above.func is parent:
            node = above
            continue
        break
    parent = recording.parent(node)
    if isinstance(parent, cst.DictElement) and parent.value is node or isinstance(parent, cst.Element):
        return node if isinstance(node, cst.BaseExpression) else None
    if isinstance(parent, cst.Assign) and parent.value is node and all(isinstance(t.target, cst.Subscript) for t in parent.targets):
        return node if isinstance(node, cst.BaseExpression) else None
    call = recording.parent(parent) if isinstance(parent, cst.Arg) else None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "insert"):
        return node if isinstance(node, cst.BaseExpression) else None
    return None


def _short(expression: cst.BaseExpression) -> str:
    """``nn.Sequential(...)`` for a long construction (``.to(device)`` chains left out)."""
    text = code(expression)
    node: cst.BaseExpression = expression
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
        node = node.func.value
    return text if len(text) <= 40 or not isinstance(node, cst.Call) else f"{code(node.func)}(...)"


_MODULE_CONTAINERS = frozenset(
    f"torch.nn.{prefix}{name}"
    for prefix in ("", "modules.container.")
    for name in ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
)

# calls that return the module itself: Net().to(device) is still the model
_SAME_MODEL = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "double", "requires_grad_"})


def _uses_beyond_optimizers(values: Values, model: Model, statement: cst.CSTNode) -> bool:
    """``statement`` holds a use of the model besides building its optimizers (``for epoch in
    ...: optimizer = SGD(model.parameters(), lr=...); train(model, ...)``): placed after it, the
    wrap would come after the training it holds."""
    building = [o.node for o in model.optimizers]
    return any(values.inside(o.node, statement) and not any(values.inside(o.node, b) for b in building) for o in model.occurrences)


def _configuring_block(statement: cst.CSTNode) -> list[cst.CSTNode] | None:
    """The statements of an ``if`` (no ``else``) or ``with`` block at the same level, where an
    optimizer is built; None for anything else (a loop, a branch with an alternative)."""
    if isinstance(statement, cst.If) and statement.orelse is None or isinstance(statement, cst.With):
        block = statement.body
        return list(block.body) if isinstance(block, cst.IndentedBlock) else None
    return None


def _trained_name(recording: Recording, model: Model, statement: cst.CSTNode, name: str) -> str:
    """The name the wrap rebinds: ``name``, unless its binding never reaches a training forward
    and exactly one other plain name bound to the model in the same frame, by the end of
    ``statement`` (the one the wrap follows), does: ``m = model.to(device)`` then ``m(xb, yb)``;
    ``net = model`` before the optimizer, then ``net(x)``; ``classifier = model`` returned to the
    caller that trains it. Rebinding that name is what puts the training forward through DDP."""
    forwards = {id(site.node.func) for site in model.forward_calls if isinstance(site.node, cst.Call)}
    values = recording.analysis.models.values
    frame = values.frame_of(statement)
    bound: dict[str, list[cst.Name]] = {}
    for occurrence in model.occurrences:
        parent = recording.parent(occurrence.node)
        if isinstance(parent, cst.Assign) and parent.value is occurrence.node and values.frame_of(parent) is frame:
            if values.end(parent) <= values.end(statement):
                for target in parent.targets:
                    if isinstance(target.target, cst.Name):
                        bound.setdefault(target.target.value, []).append(target.target)

    def trains(names: list[cst.Name]) -> bool:  # a read after the wrap reaches a training forward
        after = [
            r for n in names for r in values.reads_from(n) if values.frame_of(r) is not frame or values.start(r) >= values.end(statement)
        ]
        return any(id(o.node) in forwards for r in after for o in values.flow(r).occurrences)

    if not forwards or name not in bound or trains(bound[name]):
        return name
    others = [other for other, names in bound.items() if other != name and trains(names)]
    return others[0] if len(others) == 1 else name


def _trained_through_container(recording: Recording, model: Model) -> bool:
    """Whether the container is on the training path: the optimizer names the model through
    it (``models["g"].parameters()``), or a forward reads it out (``nets[0](x)``, ``for net in
    nets: net(x)``); a dict only built to be saved (``state = {"net": net}``) is not, nor where
    the training hands the model by name to a call that runs it (``criterion(x, y, student,
    teacher)``: a loss module's forward calls it, and gets the wrapper)."""
    if not is_simple_reference(cst.parse_expression(model.key)):
        return True
    dataflow = recording.analysis.dataflow
    if not model.forward_calls and not any(dataflow.on_training_path(site.node) for site in model.handoffs):
        return True  # no forward through the name the wrap would rebind (nor a call it is handed to): the container is the way in
    values = recording.analysis.models.values
    for site in model.forward_calls:
        func = site.node.func if isinstance(site.node, cst.Call) else site.node
        if not is_simple_reference(func):
            return True
        if isinstance(func, cst.Name) and any(
            isinstance(binding_site(values.source, s), (cst.For, cst.CompFor)) for s in values.stores_reaching(func)
        ):
            return True
    return False


def _spelling(recording: Recording, model: Model, statement: cst.BaseStatement) -> cst.BaseExpression | None:
    """How the statement's own frame names the model once the statement has run: the last
    target it is assigned to there, else the last plain reference to it (``model`` of
    ``model.to(device)``)."""
    values = recording.analysis.models.values
    frame = values.frame_of(statement)
    inside = [o.node for o in model.occurrences if values.inside(o.node, statement) and values.frame_of(o.node) is frame]
    found: list[cst.BaseExpression] = []
    for node in sorted(inside, key=values.end):
        parent = recording.parent(node)
        if isinstance(parent, cst.Assign) and parent.value is node:
            found += [t.target for t in parent.targets if is_simple_reference(t.target)]
        elif (paired := _paired_name(recording, parent)) is not None:  # g, d = Generator(), Discriminator()
            found.append(paired)
        elif isinstance(parent, cst.AnnAssign) and parent.value is node and is_simple_reference(parent.target):
            found.append(parent.target)
        elif (
            is_simple_reference(node)
            and not _in_comprehension(recording, node, statement)
            and not _loop_variable(recording, node, statement)
        ):
            found.append(node)
    return found[-1] if found else None


def _paired_name(recording: Recording, parent: cst.CSTNode | None) -> cst.BaseExpression | None:
    paired = paired_target(recording.analysis.source, parent) if isinstance(parent, cst.Element) else None
    return paired if paired is not None and is_simple_reference(paired) else None


def _in_comprehension(recording: Recording, node: cst.CSTNode, statement: cst.CSTNode) -> bool:
    """``m`` of ``[p for m in models.values() for p in m.parameters()]``: a name that does not
    exist after the statement, so never one a wrap can rebind."""
    for ancestor in recording.analysis.source.ancestors(node):
        if ancestor is statement:
            return False
        if isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return True
    return False


def _loop_variable(recording: Recording, node: cst.CSTNode, statement: cst.CSTNode) -> bool:
    """``net`` of ``for net in nets.values(): net.to(device)``: one element at a time; rebinding
    it after the loop would wrap the last element and change nothing the container hands out."""
    if not isinstance(node, cst.Name):
        return False
    loops = [a for a in recording.analysis.source.ancestors(node) if isinstance(a, cst.For)]
    inside = [loop for loop in loops if loop is statement or any(a is statement for a in recording.analysis.source.ancestors(loop))]
    return any(isinstance(loop.target, cst.Name) and loop.target.value == node.value for loop in inside)


def _kept_by_callee(
    recording: Recording, model: Model, statement: cst.BaseStatement
) -> tuple[cst.BaseStatement | None, cst.BaseExpression | None]:
    """``trainer = Trainer(nn.Linear(20, 1), data)``: the statement of the called function
    that stores the model it is handed (``self.model = model``), and that attribute."""
    values = recording.analysis.models.values
    for occurrence in sorted(model.occurrences, key=lambda o: values.start(o.node)):
        call = values.entered_through(occurrence.trail)
        parent = recording.parent(occurrence.node)
        if call is None or not values.inside(call, statement) or not isinstance(parent, cst.Assign) or parent.value is not occurrence.node:
            continue
        targets = [t.target for t in parent.targets if isinstance(t.target, cst.Attribute) and is_simple_reference(t.target)]
        held = recording.parent(parent)
        if targets and isinstance(held, cst.SimpleStatementLine):
            return held, targets[-1]
    return None, None


def _line(recording: Recording, model: Model) -> int:
    """The statement a held model's item is about: its one construction, else its optimizer."""
    if len(model.constructed_at) == 1:
        return model.constructed_at[0].line
    return model.optimizers[0].line if model.optimizers else recording.analysis.source.line(model.occurrences[0].node)


def _hold(recording: Recording, facts: Facts, model: Model, key: str, why: str, todo: str = "") -> None:
    todo = todo or (
        f"write {key} = ddpify.prepare_model({key}) where it is on its final device and loaded, before it trains, "
        "then convert again: its training loaders are sharded once it is wrapped"
    )
    facts.held_models.append(HeldModel(key, model, [item(_line(recording, model), f"{why}: not wrapped", todo)]))
    _keep_own_members(facts, model)


def _hold_for_bypasses(recording: Recording, facts: Facts, model: Model, key: str, bypasses: tuple[Bypass, ...]) -> None:
    """``vae.encode(x)`` on the training path runs around DDP's forward: its gradients would
    not be averaged, and a wrapper has no ``encode`` anyway. Reported at each call."""
    items = []
    for bypass in bypasses:
        call = bypass.node
        called = code(call.func) if isinstance(call, cst.Call) else f"{key}.{bypass.method}"
        items.append(
            item(
                bypass.line,
                f"{called}() trains {key} outside its forward: the forward bypasses DDP, gradients would not be averaged, "
                f"so {key} is not wrapped",
                f"route the call through forward (e.g. def forward(self, x, mode): return self.{bypass.method.split('.')[0]}(x) "
                f"if mode == '{bypass.method.split('.')[0]}' else ..., then call {key}(x, mode='{bypass.method.split('.')[0]}')), "
                "or wrap the submodules it trains with ddpify.prepare_model; then convert again",
            )
        )
    facts.held_models.append(HeldModel(key, model, items))
    _keep_own_members(facts, model)


def _keep_own_members(facts: Facts, model: Model) -> None:
    """A model left unwrapped keeps ``model.decode(...)`` as written: there is no wrapper to see through."""
    facts.kept_attributes.update(u.node for u in model.own_uses if isinstance(u.node, cst.Attribute))
