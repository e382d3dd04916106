"""Training loops over batches this file does not build (``ddpify.analysis.dataflow``, kind
UNKNOWN): a parameter of the function that trains (``def fit(self, loader)``), an attribute
set from one (``self.data = loaders[0]``), a generator over one, an object other code made
(``opt.batches = build_batches(...)``). Left as it is, every rank trains on all of it: N times
the work, no speed-up, and no epoch reshuffles the shards.

- A parameter, or an attribute set from one, that trains a wrapped model is rebuilt where this
  file binds it: ``ddpify.shard`` gives a plain DataLoader a DistributedSampler and hands
  anything else back unchanged, with a warning. ``epochs.plan`` then reshuffles it every epoch
  (``ddpify.set_epoch``, which does nothing to an object without a sampler).
- Otherwise (the model it trains is not wrapped, an element of a parameter, an object ddpify
  cannot follow to where it is made) it is reported where this file binds it (else at the
  loop), and the epoch loop that must reshuffle it gets its own item.

What another file's helper returns into a variable here is ``loaders._collect_helper_loaders``'.
"""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from ddpify.analysis.batch_calls import counts, loader_inner
from ddpify.analysis.callgraph import binding_site
from ddpify.analysis.dataflow import BatchSource, Kind, Role, Use
from ddpify.analysis.values import Origin
from ddpify.convert import names
from ddpify.convert.fact_types import Facts, HelperLoader, LoaderVariable, item
from ddpify.convert.planners.calls import opaque_helper, project_helper
from ddpify.convert.planners.loaders import unwrapped_trainee
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, is_simple_reference


class _Outside:
    """Where the batches of one source come from, as far as this file shows it."""

    def __init__(
        self,
        key: str,
        what: str,
        statement: cst.BaseStatement | None,
        *,
        function: str | None = None,
        before: bool = False,
        unshardable: str | None = None,
        built_here: bool = False,
    ):
        self.key = key  # what to rebind (``batches``, ``self.data``) or, when reported, to name
        self.what = what  # "a parameter of Trainer.fit()"
        self.statement = statement  # where it is rebound: after this statement (before it if ``before``)
        self.function = function  # the function whose parameter it is ("Trainer.fit"), rebound first thing there
        self.before = before
        self.unshardable = unshardable  # why it cannot be rebuilt here (None: it can)
        self.built_here = built_here  # made by calls of this file (a library's iterator), not a DataLoader

    def binding(self) -> cst.BaseStatement | None:
        """The statement of this file that binds it (a parameter has none)."""
        return None if self.function is not None else self.statement

    def where(self) -> str:
        """Where a report tells to rebind it."""
        if self.function is not None:
            return f"first thing in {self.function}()"
        return "after this line" if self.statement is not None else "before the loop that trains on it"


class _Parameter(NamedTuple):
    name: str
    function: cst.FunctionDef


def plan(recording: Recording, facts: Facts) -> None:
    """Rebuild (``Facts.helper_loaders``, ``Facts.loader_variables``) or report each training
    source this file does not build."""
    dataflow = recording.analysis.dataflow
    helpers = {assign.value for assign, _ in recording.call_assignments if opaque_helper(recording, assign.value)}  # type: ignore[arg-type]
    done: set[tuple[int, str]] = set()  # (line, key): two loops over the same parameter, one rebinding
    for source in dataflow.sources:
        if source.kind is not Kind.UNKNOWN or source.role is not Role.TRAIN or source.node in helpers:
            continue
        origins = dataflow.values.origins(source.node, inner=loader_inner)
        if any(names.RUNTIME_MODULE in _qualified(recording, node) for node in (source.node, *(o.node for o in origins))):
            continue  # converted already: ddpify.shard(...)
        outside = _trace(recording, source, origins)
        loop = next(c for c in source.consumers if c.use is Use.TRAINING)
        at = (recording.line(outside.statement) if outside.statement is not None else loop.line, outside.key)
        if outside.key in recording.existing_shards or at in done:
            continue
        done.add(at)
        trainee = unwrapped_trainee(recording, facts, [source])
        if facts.data_from_caller and not outside.built_here and trainee is None:
            continue  # the script converted alongside shards what it hands in, for the passes that train
        reason = trainee or outside.unshardable
        if reason is None and outside.statement is not None:
            _shard(recording, facts, outside)
        else:
            _report(recording, facts, source, outside, reason or "")


def _qualified(recording: Recording, node: cst.CSTNode) -> str:
    """The qualified names of a call's callee, joined (empty for anything but a call)."""
    return " ".join(recording.qualified(node.func)) if isinstance(node, cst.Call) else ""


def _trace(recording: Recording, source: BatchSource, origins: tuple[Origin, ...]) -> _Outside:
    """What the source is: a parameter (whole: rebound at the top of its function; set into an
    attribute: rebound after that statement; one element: reported), an attribute a caller
    set, another file's result (rebound at the top of the function whose parameter holds it),
    values of several places, or untraced."""
    iterated = _looped(recording, source) or _unwrapped(recording, source.node)
    parameter = _parameter(recording, origins[0]) if len(origins) == 1 else None
    if parameter is not None:
        origin = origins[0]
        function = recording.analysis.dataflow.values.name_of(parameter.function)
        named = parameter.name if origin.slot is None else f"element {origin.slot!r} of {parameter.name}"
        described = f"{named}, a parameter of {function}()"
        stored = next((e.site for e in origin.steps if e.kind == "attribute"), None)
        if stored is not None:
            return _Outside(code(stored), f"set from {described}", recording.analysis.source.statement_of(stored))
        if origin.slot is not None:
            return _Outside(code(iterated), described, None, unshardable="ddpify cannot rebind one element of a parameter")
        return _top_of(parameter, function, f"a parameter of {function}()")
    stored_by_caller = _stored_by_caller(recording, iterated)
    if stored_by_caller is not None:
        statement, value = stored_by_caller
        helper = opaque_helper(recording, value) if isinstance(value, cst.Call) else None
        what = f"returned by {helper}() of another file" if helper is not None else f"set to {code(value)[:40]}"
        return _Outside(
            code(iterated),
            what,
            statement,
            unshardable="ddpify finds it only by the attribute's name on an object handed to the function that trains",
        )
    helper = opaque_helper(recording, origins[0].node) if len(origins) == 1 and isinstance(origins[0].node, cst.Call) else None
    if helper is not None:
        handed = _parameter(recording, Origin(iterated, known=False)) if isinstance(iterated, cst.Name) else None
        if handed is not None:  # fit(model, get_loader()): its only caller here hands it a helper's loader
            function = recording.analysis.dataflow.values.name_of(handed.function)
            return _top_of(handed, function, f"a parameter of {function}(), given what {helper}() (another file) returns")
        return _Outside(
            code(iterated)[:60], f"returned by {helper}() of another file", None, unshardable="no name of this file holds it to rebind"
        )
    if len(origins) > 1:
        made = ", ".join(dict.fromkeys(_described(recording, o) for o in origins))
        if all(isinstance(o.node, cst.Call) and project_helper(recording, o.node) is None for o in origins):
            lines = ", ".join(str(recording.line(o.node)) for o in origins)
            return _Outside(
                code(iterated)[:60],
                f"built by {made} in this file (lines {lines})",
                None,
                unshardable="it is not a DataLoader, and ddpify shards DataLoaders only",
                built_here=True,
            )
        return _Outside(code(iterated)[:60], f"set from {made}", None, unshardable="it comes from more than one place")
    held = _attribute_of_project_object(recording, iterated)
    if held is not None:
        return held
    return _Outside(code(iterated)[:60], "made by code this file does not show", None, unshardable="ddpify cannot tell what it is")


def _attribute_of_project_object(recording: Recording, iterated: cst.BaseExpression) -> _Outside | None:
    """``for x, y in dataset.train:`` with ``dataset = Cifar(batch_size)`` bound once here by a
    class (or function) of the project's modules: rebound after that statement
    (``dataset.train = ddpify.shard(dataset.train)``), which rebuilds a plain DataLoader with a
    DistributedSampler and hands anything else back unchanged."""
    if not (isinstance(iterated, cst.Attribute) and isinstance(iterated.value, cst.Name)):
        return None
    source = recording.analysis.source
    bindings = source.assignments.get(iterated.value.value, [])
    if len(bindings) != 1:
        return None
    statement, value = bindings[0]
    if not isinstance(value, cst.Call) or source.project_call(value) is None:
        return None
    line = source.statement_of(statement) if not isinstance(statement, cst.BaseStatement) else statement
    if not isinstance(line, cst.BaseStatement):
        return None
    return _Outside(code(iterated), f"an attribute of {iterated.value.value}, made by {code(value.func)}() of another file", line)


def _looped(recording: Recording, source: BatchSource) -> cst.BaseExpression | None:
    """What the training loop over the source iterates (``loader`` of ``enumerate(loader)``),
    when it is a ``for`` over it (not a counting loop that calls ``next()``)."""
    loop = next(c.node for c in source.consumers if c.use is Use.TRAINING)
    if not isinstance(loop, cst.For) or counts(recording.analysis.source, loop.iter):
        return None
    return _unwrapped(recording, loop.iter)


def _unwrapped(recording: Recording, node: cst.CSTNode) -> cst.BaseExpression:
    """The iterable inside ``enumerate(...)``, ``tqdm(...)``..."""
    while (inner := loader_inner(recording.analysis.source, node)) is not None:
        node = inner
    assert isinstance(node, cst.BaseExpression)
    return node


def _described(recording: Recording, origin: Origin) -> str:
    """One place a value may come from, for a report: ``loader of T.__init__()``, ``get_data()``."""
    parameter = _parameter(recording, origin)
    if parameter is not None:
        return f"{parameter.name} of {recording.analysis.dataflow.values.name_of(parameter.function)}()"
    if isinstance(origin.node, cst.Call):
        return f"{code(origin.node.func)[:40]}()"
    return code(origin.node)[:40]


def _parameter(recording: Recording, origin: Origin) -> _Parameter | None:
    """The parameter of a function of this file where following the value stopped (no call
    here passes it), or that a name reads."""
    node = origin.node
    if origin.known or not isinstance(node, cst.Name):
        return None
    stores = (
        [node] if binding_site(recording.analysis.source, node) is not None else recording.analysis.dataflow.values.stores_reaching(node)
    )
    param = binding_site(recording.analysis.source, stores[0]) if len(stores) == 1 else None
    parameters = recording.parent(param) if isinstance(param, cst.Param) else None
    function = recording.parent(parameters) if parameters is not None else None
    return _Parameter(node.value, function) if isinstance(function, cst.FunctionDef) else None


def _top_of(parameter: _Parameter, function: str, described: str) -> _Outside:
    """A whole parameter is rebound first thing in its function (after the docstring): the
    function's every use of it then reads the sharded loader."""
    body = parameter.function.body
    if not isinstance(body, cst.IndentedBlock):
        return _Outside(parameter.name, described, None, function=function, unshardable="its function is written on one line")
    first = body.body[0]
    docstring = isinstance(first, cst.SimpleStatementLine) and parameter.function.get_docstring() is not None
    return _Outside(parameter.name, described, first, function=function, before=not docstring)


def _stored_by_caller(recording: Recording, iterated: cst.CSTNode) -> tuple[cst.BaseStatement, cst.BaseExpression] | None:
    """``opt.batches`` read in ``train(model, opt)``: the statement of a caller that sets that
    attribute on the object it passes as ``opt`` (``opt.batches = build_batches(...)``), and
    the value it sets."""
    if not (isinstance(iterated, cst.Attribute) and isinstance(iterated.value, cst.Name)):
        return None
    values = recording.analysis.dataflow.values
    parameter = _parameter(recording, Origin(iterated.value, known=False))
    if parameter is None:
        return None
    params = [*parameter.function.params.posonly_params, *parameter.function.params.params, *parameter.function.params.kwonly_params]
    param = next(p for p in params if p.name.value == parameter.name)
    for call, implicit in values.callers(parameter.function):
        argument = values.argument(call, parameter.function, implicit, param)
        scope = recording.function_of(call)
        if argument is None or not is_simple_reference(argument):
            continue
        wanted = f"{code(argument)}.{iterated.attr.value}"
        for assign, statement in recording.call_assignments:
            targets = [t.target for t in assign.targets]
            if recording.function_of(assign) is scope and [code(t) for t in targets] == [wanted]:
                return statement, assign.value
    return None


def _shard(recording: Recording, facts: Facts, outside: _Outside) -> None:
    """``x = ddpify.shard(x)`` where this file binds it, and ``x`` a training loader for
    ``epochs.plan`` (set_epoch in the epoch loops that can name it)."""
    statement = outside.statement
    assert statement is not None
    line = recording.line(statement)
    facts.helper_loaders.append(HelperLoader(statement, outside.key, outside.what, line, before=outside.before))
    function, klass = recording.owners_of(statement)
    facts.loader_variables.append(LoaderVariable(outside.key, "train", function, klass, line))


def _report(recording: Recording, facts: Facts, source: BatchSource, outside: _Outside, reason: str) -> None:
    """One item where this file binds it (else at the training loop); one at the epoch loop
    around that loop, which must reshuffle it once it is sharded."""
    loop = next(c for c in source.consumers if c.use is Use.TRAINING)
    binding = outside.binding()
    line = recording.line(binding) if binding is not None else loop.line
    first = "once the model is wrapped (ddpify.prepare_model), " if reason.endswith("is not wrapped") else ""
    epoch_loop = _epoch_loop_around(recording, loop.node)
    if outside.built_here:
        why = f"{outside.key} is {outside.what}: training iterates it, so every rank trains on all of it; not sharded: {reason}"
        todo = (
            f"{first}build the batches with a DataLoader and a DistributedSampler (ddpify.distributed_loader(dataset, ...)), or "
            "make each rank take every ddpify.world_size()-th batch starting at ddpify.rank()"
        )
    else:
        why = f"{outside.key} is {outside.what}: training iterates it and this file does not build it, so every rank trains on all of it; not sharded: {reason}"
        todo = (
            f"{first}build it with sampler=DistributedSampler(dataset) where it is made, or write {outside.key} = ddpify.shard({outside.key}) "
            f"{outside.where()} (a plain DataLoader is rebuilt with a DistributedSampler)"
        )
    todo += ", and call ddpify.set_epoch on it at the top of its epoch loop" if epoch_loop is not None else ""
    facts.manual.append(item(line, why, todo))
    if epoch_loop is not None and recording.line(epoch_loop) != line:
        facts.manual.append(
            item(
                recording.line(epoch_loop),
                f"this epoch loop trains on {outside.key}, which "
                + ("is no DataLoader and is not sharded" if outside.built_here else "this file does not build and does not shard"),
                f"once it is sharded, call ddpify.set_epoch({outside.key}, {code(epoch_loop.target)}) first in this loop, so every epoch reshuffles the shards",
            )
        )


def _epoch_loop_around(recording: Recording, node: cst.CSTNode, depth: int = 0) -> cst.For | None:
    """The epoch loop that runs ``node``: around it, or around a call of its function (a few
    calls up)."""
    values = recording.analysis.dataflow.values
    for loop, _, _ in recording.epoch_loops:
        if values.inside(node, loop.body):
            return loop
    function = recording.function_of(node)
    if function is None or depth >= 3:
        return None
    for call, _ in values.callers(function):
        found = _epoch_loop_around(recording, call, depth + 1)
        if found is not None:
            return found
    return None
