"""Which loaders train and which evaluate, and every variable that holds one: the training
loaders are sharded (``ddpify.shard``), evaluation loaders are not (see docs/convert.md, "Evaluation").
Also the loaders this file cannot shard where they are built (helpers of other files,
IterableDatasets) and training loaders handed to evaluation code."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.dataflow import BatchSource, DataFlow, Kind
from ddpify.analysis.dataflow import Role as SourceRole
from ddpify.analysis.modules import DATAPARALLEL
from ddpify.analysis.sources import Use
from ddpify.convert import names
from ddpify.convert.fact_types import Facts, HeldModel, HelperLoader, LoaderFact, LoaderVariable, Role, item
from ddpify.convert.planners import batch_lengths
from ddpify.convert.planners.calls import opaque_helper
from ddpify.convert.planners.statements import find_outside_definitions
from ddpify.convert.record import Recording
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import attribute_name, code, is_name, is_simple_reference, keyword_value, of_types

# a loader ddpify cannot place: how to shard it, and the batch-size choice code elsewhere may need
_UNKNOWN_TODO = (
    "if it feeds training, build it with ddpify.distributed_loader(...) (same arguments: each rank gets batch_size "
    "// world_size) and convert again; if code elsewhere sizes tensors by the batch size (labels, masks), add "
    "per_process_batch=True (each rank keeps batch_size, the global batch grows world_size times)"
)


def report_iterable_datasets(recording: Recording, facts: Facts) -> None:
    """An IterableDataset yields the same items on every rank: no sampler can shard it."""
    for klass in recording.classes:
        for base in klass.bases:
            if recording.qualified(base.value) & names.ITERABLE_DATASET:
                facts.manual.append(
                    ManualItem(
                        recording.line(klass),
                        f"{klass.name.value} is an IterableDataset: no sampler can shard it",
                        "make its __iter__ yield only every ddpify.world_size()-th item starting at ddpify.rank()",
                    )
                )


def plan(recording: Recording, facts: Facts) -> None:
    """A :class:`LoaderFact` per ``DataLoader(...)``, its role decided by where its batches
    go (``ddpify.analysis.dataflow``), then the variables that hold loaders: assigned one,
    given one by a loader factory of this file, by a helper of another file, or by an alias."""
    factories: dict[str, Role] = {}  # function of this file that returns a loader -> its role
    for call, function, klass in recording.loader_calls:
        facts.has_training_code = True
        if _converted_choice(recording, call):
            continue
        key, factory = _loader_target(recording, call, function)
        fact = _loader_fact(recording, facts, call, key)
        fact.sampler_given = _sampler_given(recording, call)
        batch = keyword_value(call, "batch_size")
        if batch is None and len(call.args) > 1 and call.args[1].keyword is None and not call.args[1].star:
            batch = call.args[1].value
        if batch is not None and batch_lengths.is_variable(batch):
            fact.batch_expression = code(batch)
            if fact.role in ("train", "decided"):
                fact.batch_used_at = batch_lengths.used_at(recording, batch)
        facts.loaders[call] = fact
        if key is not None:
            facts.loader_variables.append(LoaderVariable(key, fact.role, function, klass, recording.line(call)))
        for spelling in _keyed_spellings(recording, call, fact):
            facts.loader_variables.append(LoaderVariable(spelling, "train", function, klass, recording.line(call)))
        if factory is not None:
            factories[factory] = fact.role
    _resolve_loader_factories(recording, facts, factories)
    _collect_helper_loaders(recording, facts)
    _follow_loader_aliases(recording, facts)


def _sampler_given(recording: Recording, call: cst.Call) -> bool:
    """``sampler=`` holds something where the loader is built: not ``None``, nor a variable of
    the same function whose last assignment above the call is ``None`` (``train_sampler =
    None`` before ``DataLoader(..., sampler=train_sampler)``)."""
    value = keyword_value(call, "sampler")
    if value is None or is_name(value, "None"):
        return False
    if not isinstance(value, cst.Name):
        return True
    source = recording.analysis.source
    function, line = source.enclosing_function(call), source.line(call)
    above = [
        (source.line(s), v)
        for s, v in source.assignments.get(value.value, [])
        if source.enclosing_function(s) is function and source.line(s) < line
    ]
    return not above or not is_name(max(above, key=lambda pair: pair[0])[1], "None")


def _loader_fact(recording: Recording, facts: Facts, call: cst.Call, key: str | None) -> LoaderFact:
    """Train when its batches reach backward(), eval when they are only used under no_grad /
    inference_mode or after eval(); otherwise kept unsharded and reported with the evidence.
    Names and ``shuffle=`` decide nothing. A dict comprehension (``{x: DataLoader(...) for x
    in ["train", "val"]}``) makes one loader per key: sharded for the training keys only."""
    line = recording.line(call)
    label = key or "DataLoader"
    sources = recording.analysis.dataflow.sources_of(call)
    roles = {s.role for s in sources}
    if len(roles) == 1 and SourceRole.UNKNOWN not in roles:
        role: Role = "train" if roles == {SourceRole.TRAIN} else "eval"
        per_split = _built_per_split(recording, call) if role == "train" else None
        if per_split is not None:
            return LoaderFact(call, key, "decided", per_split, line)
        return LoaderFact(call, key, role, sources[0].evidence, line)
    train = [s for s in sources if s.role is SourceRole.TRAIN]
    unknown = [s for s in sources if s.role is SourceRole.UNKNOWN]
    comprehension = recording.parent(call)
    for source in unknown if train else ():
        named = f"{label} for {source.key!r}" if source.key is not None else label
        facts.manual.append(
            item(
                line,
                f"ddpify cannot tell whether {named} trains: {source.evidence or 'no loop over its batches in this file'}; left unsharded",
                _UNKNOWN_TODO,
            )
        )
    if not train:
        reason = unknown[0].evidence if unknown else "no loop over its batches in this file"
        if any(c.use is Use.UNKNOWN for s in unknown for c in s.consumers):
            # a pass here neither trains nor evaluates (statistics over the data, with the model in
            # train mode): the run could not tell it from a training pass either
            facts.manual.append(item(line, f"ddpify cannot tell whether {label} trains: {reason}; left unsharded", _UNKNOWN_TODO))
            return LoaderFact(call, key, "kept", reason, line)
        return LoaderFact(call, key, "decided", reason, line)  # ``_settle_decided`` keeps it where that is unsafe
    if not (isinstance(comprehension, cst.DictComp) and isinstance(comprehension.key, cst.Name)):
        facts.manual.append(
            item(
                line,
                f"{label} makes loaders that train and loaders that do not, and ddpify cannot rewrite them one by one; left unsharded",
                "build the training loader with ddpify.distributed_loader(...) (same arguments) and the others with DataLoader(...)",
            )
        )
        return LoaderFact(call, key, "kept", train[0].evidence, line)
    keys = ", ".join(repr(s.key) for s in train)
    test = f"{comprehension.key.value} == {train[0].key!r}" if len(train) == 1 else f"{comprehension.key.value} in ({keys},)"
    fact = LoaderFact(call, key, "train", train[0].evidence, line, sharded_when=test.replace("'", '"'))
    return fact


def _built_per_split(recording: Recording, call: cst.Call) -> str | None:
    """Why one ``DataLoader(...)`` call serves several splits, when it does: it is built from
    the variable of a loop around it (``for split in splits: DataLoader(datasets[split], ...)``)
    and that loop branches on the variable (``if split == "train": loss.backward()``), so some
    of its passes train and others evaluate. Sharded as a whole, the evaluation passes would
    each see part of their set; decided per pass at run time, each is right."""
    mentioned = {n.value for n in of_types(call, cst.Name)}
    for ancestor in recording.analysis.source.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return None
        if isinstance(ancestor, cst.For) and isinstance(ancestor.target, cst.Name) and ancestor.target.value in mentioned:
            variable = ancestor.target.value
            tests = [i.test for i in recording.analysis.source.of_types_in(ancestor.body, cst.If)]
            if any(variable in {n.value for n in of_types(test, cst.Name)} for test in tests):
                return (
                    f"it is built anew for each {variable} of the loop at line {recording.line(ancestor)}, which trains on "
                    f"some of them only (it branches on {variable})"
                )
    return None


def _keyed_spellings(recording: Recording, call: cst.Call, fact: LoaderFact) -> list[str]:
    """``loaders["train"]``: how the training loaders of a dict comprehension are read, for set_epoch."""
    if fact.sharded_when is None:
        return []
    sources = recording.analysis.dataflow.sources_of(call)
    return list(dict.fromkeys(name for s in sources if s.role is SourceRole.TRAIN for name in s.names if "[" in name))


def _converted_choice(recording: Recording, call: cst.Call) -> bool:
    """The ``DataLoader(...)`` a converted dict comprehension keeps for its evaluation keys
    (``ddpify.distributed_loader(...) if x == "train" else DataLoader(...)``)."""
    choice = recording.parent(call)
    return (
        isinstance(choice, cst.IfExp)
        and choice.orelse is call
        and isinstance(choice.body, cst.Call)
        and "ddpify.runtime.distributed_loader" in recording.qualified(choice.body.func)
    )


def _loader_target(recording: Recording, call: cst.Call, function: cst.FunctionDef | None) -> tuple[str | None, str | None]:
    """(variable the loader is stored in, or name of the function that returns it)."""
    parent = recording.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if is_simple_reference(target):
            return code(target), None
    if isinstance(parent, (cst.AnnAssign,)) and is_simple_reference(parent.target):
        return code(parent.target), None
    if isinstance(parent, cst.Return) and function is not None:
        return None, function.name.value
    return None, None


def _resolve_loader_factories(recording: Recording, facts: Facts, factories: dict[str, Role]) -> None:
    """``self.train_loader = build_loader(...)``: the variable of a helper's loader."""
    for call, function in recording.name_calls:
        role = factories.get(function)
        if role is None:
            continue
        parent = recording.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if is_simple_reference(target):
                key = code(target)
                facts.loader_variables.append(LoaderVariable(key, role, *recording.owners_of(call), recording.line(call)))
                if role == "train" and names.EVAL_LOADER.search(key) and not names.TRAIN_LOADER.search(key):
                    facts.manual.append(
                        item(
                            recording.line(call),
                            f"{key} comes from {function}(), whose loader is sharded for training",
                            "evaluation on this loader sees 1/world_size of the data: reduce the metric sums with torch.distributed.all_reduce, or build it with a plain DataLoader",
                        )
                    )


def _collect_helper_loaders(recording: Recording, facts: Facts) -> None:
    """``train_loader, val_loader = get_loaders(...)`` with ``get_loaders`` imported: the
    DataLoader is built in another file, so the one a loop here trains on (its batches reach
    backward(): ``ddpify.analysis.dataflow``) is rebuilt at run time (``ddpify.shard``).
    Loader-named targets without that evidence are left as they are: named for evaluation,
    noted; otherwise reported (never sharded on a name alone)."""
    dataflow = recording.analysis.dataflow
    for assign, statement in recording.call_assignments:
        call = assign.value
        assert isinstance(call, cst.Call)
        helper = opaque_helper(recording, call)
        if helper is None:
            continue
        made = [s for s in dataflow.sources if s.node is call and s.kind is Kind.UNKNOWN]
        for key, slot in _helper_targets(assign):
            if key in recording.existing_shards:
                continue
            training = [s for s in made if (s.key == slot or key in s.names) and s.role is SourceRole.TRAIN]
            last = key.split(".")[-1]
            if training:
                facts.helper_loaders.append(
                    HelperLoader(statement, key, f"built in another file ({helper}())", recording.line(call), call, slot)
                )
                facts.loader_variables.append(LoaderVariable(key, "train", *recording.owners_of(call), recording.line(call)))
            elif not names.LOADER_VARIABLE.search(last):
                continue
            elif names.EVAL_LOADER.search(last) and not names.TRAIN_LOADER.search(last):
                facts.changes.append(
                    Change(
                        recording.line(call),
                        f"{key} is not trained on in this file (named {key}): left unsharded, every rank evaluates the full set",
                    )
                )
            else:  # named like a loader, no loop here shows its role: the run decides (``_settle_decided``)
                origin = f"built in another file ({helper}())"
                facts.helper_loaders.append(HelperLoader(statement, key, origin, recording.line(call), call, slot, decided=True))


def _helper_targets(assign: cst.Assign) -> list[tuple[str, int | None]]:
    """The plain references a helper's result is stored in (``train_loader``, ``self.val_dl``),
    each with its element of the result (None: the whole result)."""
    found: list[tuple[str, int | None]] = []
    for target in assign.targets:
        if isinstance(target.target, (cst.Tuple, cst.List)):
            found += [(code(e.value), i) for i, e in enumerate(target.target.elements) if is_simple_reference(e.value)]
        elif is_simple_reference(target.target):
            found.append((code(target.target), None))
    return found


def _follow_loader_aliases(recording: Recording, facts: Facts) -> None:
    """``self.train_loader = train_loader`` (e.g. a constructor argument) is the same loader.

    Matching is by the last name component, so a loader handed to ``Trainer.__init__`` as a
    parameter of the same name is followed too."""
    known = {v.key.split(".")[-1]: v.role for v in facts.loader_variables}
    for target, value, node in recording.aliases:
        role = known.get(value.split(".")[-1])
        if role is not None and target not in {v.key for v in facts.loader_variables}:
            facts.loader_variables.append(LoaderVariable(target, role, *recording.owners_of(node), recording.line(node)))


def plan_unsharded_evaluation(recording: Recording, facts: Facts) -> None:
    """``calc_accuracy(train_loader, model)``: evaluation code (a loop over a loader
    parameter, no backward, no step) given a *training* loader would score one shard."""
    evaluators = {f.name.value: _evaluated_parameters(f) for f in recording.functions}
    evaluators = {name: params for name, params in evaluators.items() if params}
    if not evaluators:
        return
    train = {v.key.split(".")[-1] for v in facts.loader_variables if v.role == "train"}
    for call, _ in recording.name_calls + recording.self_method_calls:
        function = call.func.value if isinstance(call.func, cst.Name) else call.func.attr.value  # type: ignore[attr-defined]
        params = evaluators.get(function)
        if not params:
            continue
        for position, arg in enumerate(call.args):
            named = arg.keyword.value if arg.keyword is not None else None
            evaluated = named in params.values() if named else position in params
            if evaluated and is_simple_reference(arg.value) and code(arg.value).split(".")[-1] in train:
                facts.unsharded_args.add(arg)


def _evaluated_parameters(function: cst.FunctionDef) -> dict[int, str]:
    """Positions of the parameters an evaluation function loops over (no backward, no step;
    not a generator, which hands the batches on to whatever iterates it)."""
    body = function.body
    if any(attribute_name(c.func) in {"backward", "step"} for c in find_outside_definitions(body, cst.Call)):
        return {}
    if find_outside_definitions(body, cst.Yield):
        return {}
    params = [p.name.value for p in function.params.params]
    if params[:1] == ["self"]:
        params = params[1:]
    looped: set[str] = set()
    for loop in find_outside_definitions(body, cst.For):
        iterated = loop.iter
        if isinstance(iterated, cst.Call) and iterated.args:
            iterated = iterated.args[0].value
        if isinstance(iterated, cst.Name):
            looped.add(iterated.value)
    return {i: name for i, name in enumerate(params) if name in looped}


def hold_back(recording: Recording, facts: Facts) -> None:
    """Loaders that train a model left unwrapped (``Facts.held_models``) stay unsharded: with
    a shard each and no averaged gradients, every rank would train its own model on its own
    part of the data. The model's report item names them."""
    dataflow = recording.analysis.dataflow
    for held in facts.held_models:
        uses = _uses(held)
        kept: list[str] = []
        for fact in facts.loaders.values():
            sources = [s for s in dataflow.sources_of(fact.call) if s.role is SourceRole.TRAIN]
            held_already = fact.role == "kept" and fact.reason.startswith(_HELD)
            if (fact.role == "train" or held_already) and _trains(dataflow, sources, uses):
                if not held_already:
                    fact.role, fact.reason, fact.sharded_when = "kept", f"{_HELD}{held.key}, which is not wrapped", None
                function = recording.function_of(fact.call)
                kept.append(fact.key or (f"the DataLoader of {function.name.value}()" if function is not None else "the DataLoader"))
                _keep_variables(facts, fact.key)
        for loader in list(facts.helper_loaders):
            sources = [s for s in dataflow.sources if s.node is loader.call and (loader.key in s.names or s.key == loader.slot)]
            if _trains(dataflow, [s for s in sources if s.role is SourceRole.TRAIN], uses):
                facts.helper_loaders.remove(loader)
                kept.append(loader.key)
                _keep_variables(facts, loader.key)
        items = list(held.items)
        if kept and items:
            first = items[0]
            items[0] = item(first.line, f"{first.why}; the loaders it trains on stay unsharded: {', '.join(kept)}", first.todo)
        facts.manual.extend(items)
    if not (facts.wraps_models() or recording.existing_wraps or facts.held_models or _wraps_itself(recording)):
        if not facts.models_from_caller:  # a module handed DDP models: they are wrapped already
            _hold_without_wrapped_models(recording, facts)
    _settle_decided(recording, facts)


def _settle_decided(recording: Recording, facts: Facts) -> None:
    """A loader whose role only the run can tell is sharded for the passes that train a
    wrapped model (``only_when_training``) -- unless a trained model stays unwrapped (its
    training passes would be taken for the wrapped model's) or nothing is wrapped: then it is
    kept whole and reported, with what to write. Training done by project modules converted
    alongside (``Facts.trains_in_modules``) wraps its models there: the run tells which passes
    train one, and with none wrapped no pass is sharded."""
    wrapped = facts.wraps_models() or recording.existing_wraps or _wraps_itself(recording) or facts.trains_in_modules
    safe = not facts.held_models and bool(wrapped)
    for fact in facts.loaders.values():
        if fact.role != "decided" or safe:
            continue
        fact.role = "kept"
        _keep_variables(facts, fact.key)
        label = fact.key or "DataLoader"
        facts.manual.append(item(fact.line, f"ddpify cannot tell whether {label} trains: {fact.reason}; left unsharded", _UNKNOWN_TODO))
    for loader in [h for h in facts.helper_loaders if h.decided and not safe]:
        facts.helper_loaders.remove(loader)
        key = loader.key
        facts.manual.append(
            item(
                loader.line,
                f"{key} is {loader.origin} and no loop in this file trains on it: ddpify cannot tell whether it trains; left unsharded",
                f"if it feeds training, write {key} = ddpify.shard({key}, only_when_training=True) after this line (each DataLoader "
                "in it is then sharded for the passes that train a wrapped model)",
            )
        )


def unwrapped_trainee(recording: Recording, facts: Facts, sources: list[BatchSource]) -> str | None:
    """Why the batches of ``sources`` must stay unsharded (None: a wrapped model trains on
    them): a held model trains on them, or no model of this file is wrapped. Sharded, every
    rank would train its own copy on its own part of the data."""
    dataflow = recording.analysis.dataflow
    for held in facts.held_models:
        if _trains(dataflow, sources, _uses(held)):
            return f"{held.key}, which it trains, is not wrapped"
    if not (facts.wraps_models() or recording.existing_wraps or _wraps_itself(recording) or facts.models_from_caller):
        return "no model of this file is wrapped"
    return None


def _uses(held: HeldModel) -> list[cst.CSTNode]:
    """Where a held model is used on the training path: its forward calls and bypasses."""
    return [s.node for s in held.model.forward_calls] + [b.node for b in held.model.bypasses]


def _wraps_itself(recording: Recording) -> bool:
    """A distributed script: it gives some module to DDP (or ``ddpify.prepare_model``) itself."""
    wrapped = recording.analysis.models.optimizers.wrapped
    calls = [recording.parent(recording.parent(argument) or argument) for argument in wrapped]
    return any(isinstance(c, cst.Call) and not recording.qualified(c.func) & DATAPARALLEL for c in calls)


def _hold_without_wrapped_models(recording: Recording, facts: Facts) -> None:
    """No model of this file is wrapped (trained by hand, by an optimizer built elsewhere):
    a training loader sharded anyway would give every rank its own model."""
    for fact in facts.loaders.values():
        if fact.role == "train":
            fact.role, fact.reason, fact.sharded_when = "kept", "no model it trains is wrapped", None
            _keep_variables(facts, fact.key)
            facts.manual.append(
                item(
                    fact.line,
                    f"{fact.key or 'this DataLoader'} trains, but no model of this file is wrapped for DDP: "
                    "sharded, every rank would train its own model on its own part of the data; left unsharded",
                    "wrap the trained model (model = ddpify.prepare_model(model), before it trains), then convert again",
                )
            )
    for loader in [h for h in facts.helper_loaders if not h.decided]:  # decided ones: ``_settle_decided``
        facts.helper_loaders.remove(loader)
        _keep_variables(facts, loader.key)
        facts.manual.append(
            item(
                loader.line,
                f"{loader.key} trains, but no model of this file is wrapped for DDP: "
                "sharded, every rank would train its own model on its own part of the data; left unsharded",
                "wrap the trained model (model = ddpify.prepare_model(model), before it trains), then convert again",
            )
        )


_HELD = "it trains "


def _trains(dataflow: DataFlow, sources: list[BatchSource], uses: list[cst.CSTNode]) -> bool:
    """Whether batches of ``sources`` are trained on where the model is used (any training
    loader, when no use of the model on the training path is known)."""
    if not sources:
        return False
    return not uses or any(dataflow.trains_during(s, use) for s in sources for use in uses)


def _keep_variables(facts: Facts, key: str | None) -> None:
    facts.loader_variables[:] = [v._replace(role="kept") if v.key == key else v for v in facts.loader_variables]
