"""Where ``ddpify.set_epoch(loader, epoch)`` goes: the top of each epoch loop, for the training
loaders it can see, so every epoch reshuffles the shards differently (and alike on all ranks);
right after the statement that builds it for a loader the loop builds anew each epoch."""

from __future__ import annotations

import re

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.statements import assigns_locally
from ddpify.convert.record import Recording
from ddpify.findings import Change
from ddpify.tree.cstutil import code, of_types


def plan(recording: Recording, facts: Facts) -> None:
    """Each epoch loop reshuffles the training loaders it can see; when its body names some
    of them, just those (a loop over ``aux_loader`` leaves ``train_loader`` alone)."""
    train_variables = [v for v in facts.loader_variables if v.role == "train"]
    decided = [v for v in facts.loader_variables if v.role == "decided"]  # sharded when a pass trains
    placed: set[str] = set()
    for loop, function, klass in recording.epoch_loops:
        visible = list(dict.fromkeys(v.key for v in train_variables if _visible(v.key, v.function, v.klass, function, klass)))
        loop_text = code(loop.body)
        mentioned = [k for k in visible if re.search(rf"(?<![\w.]){re.escape(k)}(?!\w)", loop_text)]
        if not mentioned and not _may_pass_over_data(recording, loop):
            continue
        keys = [k for k in (mentioned or visible) if not _has_set_epoch(recording, loop, k)]
        rebuilt = {k: _bindings_inside(recording, loop, k) for k in keys}
        for variable in decided:  # a persistent one advances its own epoch; one rebuilt here starts at 0 each time
            statements = _bindings_inside(recording, loop, variable.key)
            if statements and variable.key not in rebuilt and not _has_set_epoch(recording, loop, variable.key):
                rebuilt[variable.key] = statements
        for key, statements in rebuilt.items():
            for statement in statements:  # built anew each epoch: its epoch is set where it is built
                facts.set_epoch_after.setdefault(statement, []).append((key, code(loop.target)))
        keys = [k for k in keys if not rebuilt[k]]
        if keys:
            facts.set_epoch[loop] = keys
        placed.update(rebuilt)
    if placed or recording.existing_set_epoch:
        return
    first_lines: dict[str, int] = {}
    for variable in facts.loader_variables:
        first_lines.setdefault(variable.key, variable.line)
    for variable in train_variables:
        facts.changes.append(
            Change(
                first_lines[variable.key],
                f"no epoch loop found around {variable.key}: the runtime advances its sampler's epoch on every pass instead",
            )
        )


# Methods of lists, dicts, sets and strings: calling them iterates no loader.
_CONTAINERS = (cst.List, cst.Dict, cst.Set, cst.Tuple, cst.ListComp, cst.DictComp, cst.SetComp, cst.SimpleString, cst.FormattedString)
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add", "update", "format", "join", "split", "replace", "strip", "get", "pop"})


def _may_pass_over_data(recording: Recording, loop: cst.For) -> bool:
    """A loop counting epochs that names no loader may still iterate one: in a loop of its own,
    a comprehension, a ``yield from`` or a call. Not one whose body has no loop and calls only builtins, functions of imported
    modules and container methods (unseen20t cGAN: ``for e in range(train_epoch):
    images.append(imageio.imread(...))`` after training, to assemble a gif)."""
    source = recording.analysis.source
    if any(of_types(loop.body, kind) for kind in (cst.For, cst.While, cst.CompFor, cst.Yield)):
        return True  # a loop or comprehension of its own, or a generator handing out each epoch
    for call in of_types(loop.body, cst.Call):
        assert isinstance(call, cst.Call)
        builtin = any(q.startswith("builtins.") for q in recording.qualified(call))
        method = isinstance(call.func, cst.Attribute) and call.func.attr.value in _CONTAINER_METHODS and _container(source, call.func.value)
        if not (builtin or method or source.calls_imported_module(call)):
            return True
    return False


def _container(source: Source, receiver: cst.BaseExpression) -> bool:
    """``images`` of ``images = []`` (also ``hist["loss"]`` of ``hist = {...}``), a string: every
    binding of the name a container or string literal (a ``trainer.update()`` is no container's)."""
    while isinstance(receiver, cst.Subscript):
        receiver = receiver.value
    if isinstance(receiver, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    bindings = source.assignments.get(receiver.value, []) if isinstance(receiver, cst.Name) else []
    return bool(bindings) and all(isinstance(v, _CONTAINERS) for _, v in bindings)


def _visible(
    key: str,
    owner_function: cst.FunctionDef | None,
    owner_class: cst.ClassDef | None,
    function: cst.FunctionDef | None,
    klass: cst.ClassDef | None,
) -> bool:
    """Whether a loader stored in ``key`` can be named from code in ``function``."""
    if key.startswith("self."):
        return klass is not None and owner_class is klass and function is not None
    if owner_function is None:
        return not assigns_locally(function, key)
    return owner_function is function


def _bindings_inside(recording: Recording, loop: cst.For, key: str) -> list[cst.SimpleStatementLine]:
    """The statements of the loop's body that assign ``key`` (a loader rebuilt every epoch, or
    per split): ``set_epoch`` at the top of the loop would name it before it exists."""
    found: list[cst.SimpleStatementLine] = []
    for assign in of_types(loop.body, cst.Assign):
        if any(code(t.target) == key for t in assign.targets):
            statement = recording.parent(assign)
            if isinstance(statement, cst.SimpleStatementLine):
                found.append(statement)
    return found


def _has_set_epoch(recording: Recording, loop: cst.For, key: str) -> bool:
    inside = set(of_types(loop, cst.Call))
    return any(call in inside and key in text for call, text in recording.existing_set_epoch)
