"""Which models train and where each is wrapped (``model = ddpify.prepare_model(model)``):
after it is built, moved and loaded, before the first loop, forward or hand-over that needs
the DDP model. Also what the wrap cannot settle: models trained only under a flag, trained
without an optimizer, or moved between devices after the wrap."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.modules import RETURNS_SELF
from ddpify.convert import names
from ddpify.convert.fact_types import Facts, item
from ddpify.convert.planners import wrap_options, wrap_spots, wraps
from ddpify.convert.planners.statements import assigns, assigns_locally, targets
from ddpify.convert.record import Recording
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import attribute_name, code, is_simple_reference, of_types

_MODE_OR_MOVE = frozenset({"cpu", "to", "cuda", "eval", "train"})


# ---------------------------------------------------------------- trained models
def plan_trained(recording: Recording, facts: Facts) -> None:
    """``Facts.model_keys``: DataParallel models, and the models whose parameters reach an
    optimizer (directly, or through a helper that builds it); ``Facts.trained`` pairs each
    optimizer with its models, for the wraps."""
    for model in recording.parallel_models:
        _note_model(recording, facts, model)
    project_classes = recording.analysis.models.optimizers.of_project_classes  # SAM(...) of a sibling module
    recording.optimizer_calls.extend(c for c in project_classes if c not in recording.optimizer_calls)
    if recording.optimizer_calls:
        facts.has_training_code = True
    builders = optimizer_builders(recording)
    if recording.first_backward is not None and not recording.optimizer_calls and not builders:
        # hand-written updates (p.data -= lr * p.grad), or an optimizer built by code of
        # another file: training, but no optimizer here tells ddpify which model it is
        facts.has_training_code = True
        elsewhere = recording.analysis.models.optimizers.stepped_elsewhere()
        if facts.models_from_caller:
            _note_received_models(recording, facts)
        elif elsewhere:
            _report_optimizer_built_elsewhere(recording, facts, *elsewhere[0])
        elif not _wrap_received_models(recording, facts):
            _report_manual_updates(recording, facts, recording.first_backward)
    for builder, model in builders:
        facts.has_training_code |= recording.first_backward is not None  # a helper's optimizer, and gradients to step
        facts.trained.append((builder, code(model)))
        _note_model(recording, facts, model)
    for optimizer in recording.optimizer_calls:
        owners = parameter_owners(recording, optimizer)
        for owner in owners:
            facts.trained.append((optimizer, code(owner)))
            _note_model(recording, facts, _outside(recording, optimizer, owner))
        if not owners and recording.first_backward is not None and not facts.already_converted and not _tied(recording, optimizer):
            _report_untied_optimizer(recording, facts, optimizer)


def _note_received_models(recording: Recording, facts: Facts) -> None:
    """A module converted alongside the script that wraps the models it hands in: the
    attributes that keep a received parameter and are run as modules (``self.online_network =
    online_network``, then ``self.online_network(x)``) hold DDP models; nothing here wraps them,
    and what reads their state reads through ``ddpify.unwrap`` (a no-op on a plain module)."""
    source = recording.analysis.source
    for key, bindings in source.assignments.items():
        if not key.startswith("self.") or key.count(".") != 1 or key not in recording.module_like:
            continue
        if bindings and all(isinstance(v, cst.Name) and v.value in _parameters(recording.function_of(v)) for _, v in bindings):
            facts.model_keys.add(key)
    for functions in source.functions.values():  # `def fit(model, optimizer, dataset)`: `model(x)`
        for function in functions:
            received = _parameters(function) & recording.module_like
            facts.model_keys.update(name for name in received if name not in source.assignments and name != "self")


def _wrap_received_models(recording: Recording, facts: Facts) -> bool:
    """A trainer class handed both its model and its optimizer (glow-pytorch's ``Trainer(**built,
    ...)``, the two built by a builder of another file): the optimizer steps parameters the
    file never shows, but the model whose forward the training method runs is known, kept from
    a constructor parameter (``self.graph = graph``, then ``self.graph(x)`` where ``backward()``
    runs). It is wrapped right there, ``self.graph = ddpify.prepare_model(graph)``: DDP shares
    the module's parameters, so the optimizer built before steps the wrapped model's, and the
    run-time guard stops a step of parameters no wrap covers. False: no such model (several
    classes, a model the training method does not call)."""
    backward = recording.first_backward
    trainer = recording.analysis.source.enclosing_function(backward) if backward is not None else None
    klass = recording.analysis.source.enclosing_class(trainer) if trainer is not None else None
    stepped = [r for r in recording.stepped if r.startswith("self.") and names.OPTIMIZER_VARIABLE.search(r.split(".")[-1])]
    if trainer is None or klass is None or not stepped:
        return False
    init = next((f for f in klass.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"), None)
    received = _parameters(init)
    kept = [
        key
        for key, bindings in recording.analysis.source.assignments.items()
        if key.startswith("self.")
        and key.count(".") == 1
        and any(isinstance(v, cst.Name) for _, v in bindings)
        and all(isinstance(v, cst.Name) and v.value in received or _parallel_of(recording, v, key) for _, v in bindings)
    ]
    if not all(key in kept for key in stepped):
        return False  # the optimizer comes from somewhere this class does not show
    called = {code(c.func) for c in recording.analysis.source.of_types_in(trainer, cst.Call) if isinstance(c, cst.Call)}
    models = [key for key in kept if key in recording.module_like and key in called and key not in stepped]
    if len(models) != 1 or models[0] in recording.existing_wraps:
        return False
    spot = _wrap_spot_in_methods(recording, klass, models[0])
    if spot is None:
        return False
    key, (anchor, where) = models[0], spot
    facts.model_keys.add(key)
    facts.model_wraps.append((key, anchor, where))
    # its class is out of sight: whether every parameter gets a gradient cannot be read
    facts.wrap_options[anchor, key] = wrap_options.UNUSED_OPTION
    facts.changes.append(
        Change(
            recording.line(anchor),
            f"{key} is handed in, built by code this file does not show: wrapped with {wrap_options.UNUSED_OPTION}, right "
            "whether or not each step gives every parameter a gradient (an unused head, a prior some configurations skip)",
        )
    )
    return True


def _parallel_of(recording: Recording, value: cst.BaseExpression | None, key: str) -> bool:
    """``DataParallel(self.graph, ...)`` rebinding ``self.graph``: the conversion removes it."""
    return (
        isinstance(value, cst.Call)
        and bool(recording.qualified(value) & names.DATAPARALLEL)
        and bool(value.args)
        and code(value.args[0].value) == key
    )


def _parameters(function: cst.FunctionDef | None) -> set[str]:
    if function is None:
        return set()
    return {p.name.value for p in (*function.params.params, *function.params.posonly_params, *function.params.kwonly_params)}


def optimizer_builders(recording: Recording) -> list[tuple[cst.Call, cst.Name]]:
    """``optimizer = build_optimizer(model, args)`` and later ``optimizer.step()``, or
    ``g_opt, d_opt = build_optimizers(gen, disc, cfg)`` handed to a project class that steps
    them (``GanSteps(gen, disc, g_opt, d_opt)``; a target named like an optimizer): the
    parameters reach the optimizer inside the helper, so the arguments used like modules
    elsewhere (called, given ``.train()``, ``.to()``, ``.parameters()``..., or to
    ``DataParallel``) are trained models; ``args`` is not. So are the owners of the parameters it is given
    (``make_optimizer(cfg, model.parameters())``)."""
    found: list[tuple[cst.Call, cst.Name]] = []
    stepped = recording.stepped | _given_to_project_training(recording)
    models = recording.module_like | {code(m) for m in recording.parallel_models}
    for assign, _ in recording.call_assignments:
        call = assign.value
        assert isinstance(call, cst.Call)
        made = [code(t) for t in targets(assign)] if len(assign.targets) == 1 else []
        if call in recording.optimizer_calls or not any(t in stepped and names.OPTIMIZER_VARIABLE.search(t) for t in made):
            continue
        for argument in (a.value for a in call.args):
            if isinstance(argument, cst.Call) and attribute_name(argument.func) in ("parameters", "named_parameters"):
                argument = argument.func.value  # type: ignore[attr-defined]
            if isinstance(argument, cst.Name) and argument.value in models:
                found.append((call, argument))
    return found


def _given_to_project_training(recording: Recording) -> set[str]:
    """The references handed to a function or class of the project that trains
    (``Helper.trains``): an optimizer given to it is stepped there."""
    source = recording.analysis.source
    found: set[str] = set()
    for call in recording.reference_calls:
        helper = source.project_call(call)
        if helper is not None and helper.trains:
            found.update(code(a.value) for a in call.args if is_simple_reference(a.value))
    return found


def parameter_owners(recording: Recording, optimizer: cst.Call) -> list[cst.BaseExpression]:
    """Models whose ``.parameters()`` an optimizer receives (these are the trained ones),
    also through variables: ``params = list(a.parameters()) + ...; Adam(params)``."""
    owners: list[cst.BaseExpression] = []
    pending: list[cst.CSTNode] = [arg.value for arg in optimizer.args]
    followed: set[str] = set()
    while pending:
        expression = pending.pop()
        for call in of_types(expression, cst.Call):
            if attribute_name(call.func) not in ("parameters", "named_parameters"):
                continue
            owner = call.func.value  # type: ignore[attr-defined]
            if is_simple_reference(owner) and code(owner) not in {code(o) for o in owners}:
                owners.append(owner)
        for name in of_types(expression, cst.Name):
            variable = name.value
            if variable not in followed:
                followed.add(variable)
                pending.extend(recording.values_of(variable))
    return owners


def _outside(recording: Recording, optimizer: cst.Call, owner: cst.BaseExpression) -> cst.BaseExpression:
    """``Adam(self.parameters())`` in the model's own class: the model as the script names it
    (``model``); inside its class, ``self`` is the plain module, wrapped or not."""
    if code(owner) != "self":
        return owner
    models = recording.analysis.models.models
    model = next((m for m in models if any(o.node is optimizer for o in m.optimizers)), None)
    return cst.parse_expression(model.key) if model is not None and model.key != "self" else owner


def _note_model(recording: Recording, facts: Facts, reference: cst.BaseExpression) -> None:
    """``reference`` is a trained (or DataParallel) model: its key, and for a plain name the
    scopes that bind it (see Facts.model_scopes)."""
    key = code(reference)
    facts.model_keys.add(key)
    bindings = recording.bindings(reference) if isinstance(reference, cst.Name) else None
    if bindings is not None:
        facts.model_scopes.setdefault(key, set()).update(b.scope for b in bindings)


def _report_optimizer_built_elsewhere(recording: Recording, facts: Facts, step: cst.Call, made: cst.Call) -> None:
    """``self.optimizer = model.configure_optimizers(cfg)`` (code of another file), then
    ``self.optimizer.step()``: which model it trains is invisible here, so none is wrapped."""
    receiver = code(step.func.value)  # type: ignore[attr-defined]
    models = [code(a.value) for a in made.args if is_simple_reference(a.value) and code(a.value) in recording.module_like]
    owner = made.func.value if isinstance(made.func, cst.Attribute) else None
    if owner is not None and is_simple_reference(owner) and code(owner) in recording.module_like:
        models.insert(0, code(owner))  # model.configure_optimizers(cfg); never an options object (self.opt)
    model = models[0] if models else "model"
    facts.manual.append(
        item(
            recording.line(made),
            f"{receiver} is built by {code(made.func)}() (code this file does not show): ddpify cannot tell which model it trains, "
            "so none is wrapped",
            f"wrap the model it trains before it trains: {model} = ddpify.prepare_model({model}) (the gradients are then averaged across ranks), then convert again",
        )
    )


def _tied(recording: Recording, optimizer: cst.Call) -> bool:
    """The model analysis ties ``optimizer`` to a model (through a container, a part, ...), or
    it is no optimizer's construction (``optim.step()`` with ``import torch.optim as optim``
    resolves to ``torch.optim.step``: a class is named like one and is given parameters)."""
    if not optimizer.args or not any(names.OPTIMIZER_CLASS.search(q) for q in recording.qualified(optimizer)):
        return True
    return any(site.node is optimizer for model in recording.analysis.models.models for site in model.optimizers)


def _report_untied_optimizer(recording: Recording, facts: Facts, optimizer: cst.Call) -> None:
    """An optimizer whose parameters this file does not tie to a model (``SGD(**params)`` from
    a helper, a list built elsewhere): no model is wrapped for it, and saying nothing would
    leave a run that averages nothing looking converted."""
    given = code(optimizer.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)) if optimizer.args else ""
    facts.manual.append(
        ManualItem(
            recording.line(optimizer),
            f"{code(optimizer.func)}({given}) gets parameters ddpify does not tie to a model: no model is wrapped for it, "
            "so its gradients would not be averaged across ranks",
            "wrap the model it trains where it is on its final device and loaded, before its parameters are collected "
            "(model = ddpify.prepare_model(model)), then convert again",
        )
    )


def _report_manual_updates(recording: Recording, facts: Facts, backward: cst.Call) -> None:
    """Hand-written updates (``p.data -= lr * p.grad``): no optimizer says which model is
    trained, so the item names the candidates (``fc`` of ``fc.zero_grad()`` /
    ``fc.parameters()``) instead of wrapping a guess. No line numbers in the text: an
    ``--annotate`` comment must read the same when the output is converted again."""
    # an optimizer's own zero_grad() (self.optimizer.zero_grad()) names no model: never suggest wrapping it
    candidates = [r for r in recording.parameter_receivers if not names.OPTIMIZER_VARIABLE.search(r.split(".")[-1])]
    named = ", ".join(candidates)
    model = candidates[0] if candidates else "model"
    stepped = sorted(r for r in recording.stepped if names.OPTIMIZER_VARIABLE.search(r.split(".")[-1]))
    why = (
        f"{stepped[0]} is stepped, but this file does not show where it is built: ddpify cannot tell which model it trains"
        if stepped
        else f"training without a torch.optim optimizer: ddpify cannot tell which model is trained{f' (parameters updated by hand: {named})' if named else ''}"
    )
    facts.manual.append(
        ManualItem(
            recording.line(backward),
            why,
            "wrap the model it trains where that model is built and on its final device, before the optimizer gets its "
            "parameters (model = ddpify.prepare_model(model)), then convert again"
            if stepped
            else f"wrap it after it is built: {model} = ddpify.prepare_model({model}) (the gradients are then averaged across ranks)",
        )
    )


# ---------------------------------------------------------------- wraps
def plan_wraps(recording: Recording, facts: Facts) -> None:
    """``Facts.model_wraps``: one wrap per trained model not wrapped already, where the model
    analysis places it (``planners.wraps``), or a report where it cannot. A model the analysis
    does not know (trained through an optimizer built in another file) is wrapped after the
    statement that binds it in the optimizer's function, or reported."""
    seen: set[str] = set()
    handled: list[object] = []
    for optimizer, key in facts.trained:
        # `self.discriminator` of one class is not another class's: each class's is its own model
        owner = recording.analysis.source.enclosing_class(optimizer) if key.startswith("self.") else None
        spelled = f"{owner.name.value}:{key}" if owner is not None else key
        if spelled in seen or key in recording.existing_wraps:
            continue
        seen.add(spelled)
        model = wraps.analysed(recording, optimizer, key)
        if model is not None:
            if any(model is other for other in handled):
                continue
            handled.append(model)
            wrapped = wraps.plan(recording, facts, model, key, wrap_spots.before_first_stop(recording))
            if wrapped is not None and code(wrapped) != key:
                _note_model(recording, facts, wrapped)
            continue
        spot = _wrap_spot(recording, optimizer, key)
        if spot is None:
            facts.manual.append(_unwrappable(recording, optimizer, key))
            continue
        anchor, where = spot
        facts.model_wraps.append((key, anchor, where))
    for model in recording.analysis.models.models:  # trained models no plain name reaches (models["g"])
        if model.parts and all(any(s.partition(":")[2] == f"self.{part}" for s in seen) for part in model.parts):
            continue  # `Adam(self.net.parameters())` in a Solver(nn.Module): self.net is what trains, wrapped there
        if model.optimizers and not any(model is other for other in handled) and isinstance(model.optimizers[0].node, cst.Call):
            wrapped = wraps.plan(recording, facts, model, model.key, wrap_spots.before_first_stop(recording))
            if wrapped is not None:
                facts.trained.append((model.optimizers[0].node, code(wrapped)))
                _note_model(recording, facts, wrapped)
    wrap_spots.drop_wraps_a_join_covers(recording, facts)


def _unwrappable(recording: Recording, optimizer: cst.Call, key: str) -> ManualItem:
    """Why a trained module gets no wrap: built in another function, or only a part
    (``encoder.linear``) of a model this function holds is trained -- DDP over the whole
    model would then wait forever for the gradients of the untrained rest."""
    head, _, part = key.partition(".")
    if part and head != "self" and _binds(recording, recording.function_of(optimizer), head):
        return ManualItem(
            recording.line(optimizer),
            f"only {key} of {head} reaches the optimizer: {head} wrapped whole would wait for gradients its other parameters never get",
            f"freeze the rest ({head}.requires_grad_(False), then {key}.requires_grad_(True)) before "
            f"{head} = ddpify.prepare_model({head}), or wrap with find_unused_parameters=True",
        )
    return ManualItem(
        recording.line(optimizer),
        f"{key} is trained here but built outside this function",
        f"wrap it where it is built: {key} = ddpify.prepare_model({key})",
    )


def _binds(recording: Recording, function: cst.FunctionDef | None, name: str) -> bool:
    """Whether ``function`` (None: the module's own statements) assigns ``name``."""
    if function is not None:
        return assigns_locally(function, name)
    statements = [s for s in recording.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    return any(code(target) == name for statement in statements for target in targets(statement))


def _wrap_spot(recording: Recording, optimizer: cst.Call, key: str) -> tuple[cst.CSTNode, str] | None:
    """Where ``key = ddpify.prepare_model(key)`` goes: after the model is built, moved and
    loaded, before the first loop, forward call or return that follows."""
    for statement, body in _enclosing_statements(recording, optimizer, stop_at_function=key.startswith("self.")):
        index = body.index(statement)
        anchor = next((j for j in range(index, -1, -1) if assigns(body[j], key)), None)
        if anchor is not None and not _built_in_each_branch(recording, statement, key):
            # after the optimizer too: DDP must see the final requires_grad flags and modules
            return wrap_spots.before_first_stop(recording)(body, index, key)
    if key.startswith("self."):
        klass = recording.owners_of(optimizer)[1]
        if klass is not None:
            return _wrap_spot_in_methods(recording, klass, key)
    return None


def _built_in_each_branch(recording: Recording, statement: cst.CSTNode, key: str) -> bool:
    """``if checkpoint is None: model = Net() ... else: model = checkpoint["model"]``: the
    model is wrapped after the whole ``if``, where both branches' models arrive."""
    block = recording.parent(statement)
    branch = recording.parent(block) if isinstance(block, cst.IndentedBlock) else None
    test = recording.parent(branch) if isinstance(branch, cst.Else) else branch
    if not isinstance(test, cst.If) or test.orelse is None:
        return False
    return assigns(test.with_changes(orelse=None), key) and assigns(test.orelse, key)


def _wrap_spot_in_methods(recording: Recording, klass: cst.ClassDef, key: str) -> tuple[cst.CSTNode, str] | None:
    methods = [s for s in klass.body.body if isinstance(s, cst.FunctionDef)]
    methods.sort(key=lambda f: f.name.value != "__init__")
    for method in methods:
        body = list(method.body.body) if isinstance(method.body, cst.IndentedBlock) else []
        anchor = next((j for j in range(len(body) - 1, -1, -1) if assigns(body[j], key)), None)
        if anchor is not None:
            return wrap_spots.before_first_stop(recording)(body, anchor, key)
    return None


def _enclosing_statements(
    recording: Recording, node: cst.CSTNode, *, stop_at_function: bool
) -> list[tuple[cst.CSTNode, list[cst.CSTNode]]]:
    """(statement, the statement list it stands in), innermost first."""
    found: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = []
    current: cst.CSTNode | None = node
    while current is not None:
        parent = recording.parent(current)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)) and isinstance(current, cst.BaseStatement):
            found.append((current, list(parent.body)))
        if isinstance(current, cst.FunctionDef) and stop_at_function:
            break
        if isinstance(current, cst.ClassDef):
            break
        current = parent
    return found


# ---------------------------------------------------------------- what the wrap cannot settle
def report_conditional_training(recording: Recording, facts: Facts) -> None:
    """``Adam(encoder.parameters()) if fine_tune else None``: the model is wrapped, and
    ``ddpify.prepare_model`` leaves a model without trainable parameters unwrapped (DDP
    rejects one), so whether it is trained in DDP depends on its flags at the wrap."""
    wrapped = {key for key, _, _ in facts.model_wraps} | recording.existing_wraps.keys()
    reported: set[str] = set()
    for optimizer in recording.optimizer_calls:
        condition = _optimizer_condition(recording, optimizer)
        for owner in parameter_owners(recording, optimizer) if condition else ():
            key = code(owner)
            if key in wrapped and key not in reported:
                reported.add(key)
                facts.manual.append(
                    ManualItem(
                        recording.line(optimizer),
                        f"{key} is trained only when {condition} (its optimizer is conditional): "
                        "ddpify.prepare_model wraps it only if it has trainable parameters at that point",
                        f"make its parameters trainable before ddpify.prepare_model({key}) when it is trained; "
                        "one unfrozen after the wrap trains unwrapped, its gradients never averaged",
                    )
                )


def _optimizer_condition(recording: Recording, optimizer: cst.Call) -> str | None:
    """``fine_tune is true`` for ``Adam(...) if fine_tune else None`` (``... is false`` for
    ``None if frozen else Adam(...)``); None for an optimizer always built."""
    choice = recording.parent(optimizer)
    if not isinstance(choice, cst.IfExp):
        return None
    other = choice.orelse if choice.body is optimizer else choice.body
    if not (isinstance(other, cst.Name) and other.value == "None"):
        return None
    return f"{code(choice.test)} is {'true' if choice.body is optimizer else 'false'}"


def _in_training_loop(recording: Recording, call: cst.Call) -> bool:
    """The innermost loop around ``call`` in its function trains (runs a backward)."""
    for ancestor in recording.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.For, cst.While)):
            return recording.analysis.context.divergence.trains(ancestor)
    return False


def report_moves_after_wrap(recording: Recording, facts: Facts) -> None:
    """``model.eval().cpu()`` ... ``model.to(device).train()`` inside the training loop
    (around a checkpoint): DDP's gradient buckets live on the device it wrapped the model
    on, so the moves are dropped (the checkpoint keeps the training device; loads get
    map_location) when the chain only moves and switches modes; otherwise reported."""
    wrapped = {key for key, _, _ in facts.model_wraps}
    for call in recording.moves_in_loops:
        receiver, links = call.func.value, [call]  # type: ignore[attr-defined]
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
            links.append(receiver)
            receiver = receiver.func.value  # model.eval().cpu(): the chain's start
        if code(receiver) not in wrapped or not _in_training_loop(recording, call):
            continue  # a loop that builds models (for i in range(n): model = Net(); model.cuda()) moves before any wrap
        if any(c.func.attr.value not in RETURNS_SELF for c in links[1:]):  # type: ignore[attr-defined]
            continue  # rec.initHidden().to(device): a tensor the model returned moves, not the model
        if all(c.func.attr.value in _MODE_OR_MOVE for c in links):  # type: ignore[attr-defined]
            facts.dropped_moves.add(call)
        else:
            facts.manual.append(
                ManualItem(
                    recording.line(call),
                    f"{code(receiver)} is moved between devices after the DDP wrap",
                    f"keep it on its device: save ddpify.unwrap({code(receiver)}).state_dict() directly (load with map_location)",
                )
            )
