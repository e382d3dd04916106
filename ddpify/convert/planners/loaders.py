"""Which loaders train and which evaluate, and every variable that holds one: the training
loaders are sharded (``ddpify.shard``), evaluation loaders are not (see README, "Evaluation").
Also the loaders this file cannot shard where they are built (helpers of other files,
IterableDatasets) and training loaders handed to evaluation code."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names
from ddpify.convert.fact_types import Facts, HelperLoader, LoaderFact, LoaderVariable, Role
from ddpify.convert.planners.calls import opaque_helper
from ddpify.convert.planners.statements import find_outside_definitions
from ddpify.convert.record import Recording
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import attribute_name, code, is_simple_reference, keyword_value


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
    """A :class:`LoaderFact` per ``DataLoader(...)``, then the variables that hold loaders:
    assigned one, given one by a loader factory of this file, by a helper of another file,
    or by an alias."""
    factories: dict[str, Role] = {}  # function of this file that returns a loader -> its role
    for call, function, klass in recording.loader_calls:
        facts.has_training_code = True
        key, factory = _loader_target(recording, call, function)
        role, reason = _classify_loader(key or factory, keyword_value(call, "shuffle"))
        fact = LoaderFact(call, key, role, reason, recording.line(call))
        batch = keyword_value(call, "batch_size")
        if batch is None and len(call.args) > 1 and call.args[1].keyword is None and not call.args[1].star:
            batch = call.args[1].value
        if batch is not None and is_simple_reference(batch):
            fact.batch_expression = code(batch)
        facts.loaders[call] = fact
        if key is not None:
            facts.loader_variables.append(LoaderVariable(key, role, function, klass, recording.line(call)))
        if factory is not None:
            factories[factory] = role
    for fact in facts.loaders.values():
        if fact.role == "train" and fact.batch_expression in recording.uses:
            fact.batch_used_at = recording.uses[fact.batch_expression][0]
    _resolve_loader_factories(recording, facts, factories)
    _collect_helper_loaders(recording, facts)
    _follow_loader_aliases(recording, facts)


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


def _classify_loader(name: str | None, shuffle: cst.BaseExpression | None) -> tuple[Role, str]:
    """Training loaders are sharded, evaluation loaders are not (see README, "Evaluation")."""
    if name and names.EVAL_LOADER.search(name.split(".")[-1]):
        return "eval", f"named {name}"
    if name and names.TRAIN_LOADER.search(name.split(".")[-1]):
        return "train", f"named {name}"
    if isinstance(shuffle, cst.Name) and shuffle.value == "True":
        return "train", "shuffle=True"
    if isinstance(shuffle, cst.Name) and shuffle.value == "False":
        return "eval", "shuffle=False"
    return "train", "no name or shuffle flag says otherwise"


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
                        ManualItem(
                            recording.line(call),
                            f"{key} comes from {function}(), whose loader is sharded for training",
                            "evaluation on this loader sees 1/world_size of the data: reduce the metric sums with torch.distributed.all_reduce, or build it with a plain DataLoader",
                        )
                    )


def _collect_helper_loaders(recording: Recording, facts: Facts) -> None:
    """``train_loader, val_loader = get_loaders(...)`` with ``get_loaders`` imported: the
    DataLoader is built in another file, so the training one is rebuilt here at run time
    (``ddpify.shard``). Loader-named targets only; in a tuple only the one named for
    training, a single target is classified like a DataLoader (name, then the ``shuffle=``
    given to the helper)."""
    for assign, statement in recording.call_assignments:
        call = assign.value
        assert isinstance(call, cst.Call)
        helper = opaque_helper(recording, call)
        if helper is None:
            continue
        for key, role, reason in _helper_loader_targets(assign, call):
            if role == "eval":
                facts.changes.append(
                    Change(
                        recording.line(call),
                        f"{key} is an evaluation loader ({reason}): left unsharded, every rank evaluates the full set",
                    )
                )
            elif key not in recording.existing_shards:
                facts.helper_loaders.append(HelperLoader(statement, key, helper, recording.line(call)))
                facts.loader_variables.append(LoaderVariable(key, "train", *recording.owners_of(call), recording.line(call)))


def _helper_loader_targets(assign: cst.Assign, call: cst.Call) -> list[tuple[str, Role, str]]:
    """(key, role, why) for the loader-named targets a helper's result is stored in."""
    found: list[tuple[str, Role, str]] = []
    for target in assign.targets:
        if isinstance(target.target, (cst.Tuple, cst.List)):
            for element in target.target.elements:
                key = code(element.value)
                last = key.split(".")[-1]
                named = names.TRAIN_LOADER.search(last) or names.EVAL_LOADER.search(last)
                if is_simple_reference(element.value) and names.LOADER_VARIABLE.search(last) and named:
                    found.append((key, *_classify_loader(key, None)))
        elif is_simple_reference(target.target) and names.LOADER_VARIABLE.search(code(target.target).split(".")[-1]):
            key = code(target.target)
            found.append((key, *_classify_loader(key, keyword_value(call, "shuffle"))))
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
    """Positions of the parameters an evaluation function loops over (no backward, no step)."""
    body = function.body
    if any(attribute_name(c.func) in {"backward", "step"} for c in find_outside_definitions(body, cst.Call)):
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
