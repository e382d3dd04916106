"""The last net under the loaders: a wrapped model trains, yet the conversion sharded none of
its data and no other report item says why. Then the batches reaching backward() come from
code ddpify could not rewrite (an iterator class of another module, a loader that is a global
of a third file), and unless that code splits its data by rank, every rank trains on the same
data: no speed-up, and with one seed for all ranks, identical batches. Said once, at the
first backward, with what is known about where those batches come from."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.batch_calls import next_taken
from ddpify.analysis.sources import Kind, Role
from ddpify.convert.fact_types import Facts, item
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code

# batches from something that holds data: a loader or iterator ddpify could not shard
_DATA = frozenset({Kind.UNKNOWN, Kind.CUSTOM_ITERATOR})
# report items that already say the training data stays whole, and why
_ALREADY_SAID = ("unsharded", "not sharded", "cannot shard", "ddpify shards DataLoaders only", "iterable")


def report(recording: Recording, facts: Facts) -> None:
    backward = recording.first_backward
    if backward is None or not facts.wraps_models() or facts.already_converted or facts.data_from_caller:
        return
    if facts.shards_training() or any(any(said in m.why for said in _ALREADY_SAID) for m in facts.manual):
        return
    training = [s.evidence for s in recording.analysis.dataflow.sources if s.role is Role.TRAIN and s.kind in _DATA]
    where = training[0] if training else _taken_next_to(recording, backward)
    if where is None:
        _report_whole_data(recording, facts, backward)
        return  # data made in the loop (torch.randn(...)): per rank or alike, the code decides; random indices: their planner's
    facts.manual.append(
        item(
            recording.line(backward),
            f"a DDP model trains here, but ddpify sharded none of the data that reaches this backward(): {where}; "
            "unless the code that makes those batches splits them by rank, every rank reads the whole dataset, not its part (no "
            "speed-up; with one seed for all ranks, the very same batches)",
            "build the training DataLoader with ddpify.distributed_loader(...) (or give it sampler=DistributedSampler(dataset) "
            "and call set_epoch each epoch); an iterator class of your own should read from such a loader or take every "
            "ddpify.world_size()-th item from ddpify.rank() on",
        )
    )


def _taken_next_to(recording: Recording, backward: cst.Call) -> str | None:
    """``x, y = next(iter_source)`` in the loop around the backward: batches of an iterator
    the data flow could not trace to a loader (one built by another module's class)."""
    source = recording.analysis.source
    loop = next((a for a in source.ancestors(backward) if isinstance(a, (cst.For, cst.While))), None)
    if loop is None:
        return None
    for call in source.of_types_in(loop.body, cst.Call):
        assert isinstance(call, cst.Call)
        if next_taken(source, call) is not None:
            return f"its batches are taken by {code(call)} at line {source.line(call)}, from code this file does not show"
    return None


def _report_whole_data(recording: Recording, facts: Facts, backward: cst.Call) -> None:
    """Full-batch training (pyGAT's ``model(features, adj)`` over the whole graph, a latent ODE
    fit to all its trajectories at once): a wrapped model's forward next to the backward reads
    data bound once, outside the loop and the function the step runs in. There is nothing to
    shard: every rank computes the one-process step, right but no faster, which is said."""
    if any(s.role is Role.TRAIN for s in recording.analysis.dataflow.sources):
        return  # batches drawn from it (random indices): a batch source, not the whole data
    found = _whole_input(recording, facts, backward)
    if found is None:
        return
    forward, data, bound = found
    facts.manual.append(
        item(
            recording.line(backward),
            f"{_short(forward)} (line {recording.line(forward)}) trains on {data}, made once before training (line {bound}): "
            "full-batch training, the same data on every rank at every step, so every rank computes the one-process step "
            "(right, but DDP makes it no faster)",
            "to split the work, compute the loss on each rank's part of the samples (e.g. part = "
            "idx[ddpify.rank()::ddpify.world_size()] of its index tensor, equal parts), which the gradient average then "
            "joins; or run it as one process",
        )
    )


def _whole_input(recording: Recording, facts: Facts, backward: cst.Call) -> tuple[cst.Call, str, int] | None:
    """(the forward, the data it reads, the line that binds the data) for the first call of a
    wrapped model in the backward's function whose argument (or the value it is bound to
    there, ``obs = trajs[:, t, :]``) reads a name bound only outside that function and every
    loop around the backward."""
    source = recording.analysis.source
    function = recording.function_of(backward)
    scope: cst.CSTNode = function if function is not None else recording.module
    loops = [a for a in source.ancestors(backward) if isinstance(a, (cst.For, cst.While)) and _inside(recording, a, scope)]
    inner: cst.CSTNode = loops[-1] if loops else scope  # the outermost loop, or the whole function
    if inner is recording.module:
        return None
    for call in source.of_types_in(inner, cst.Call):
        assert isinstance(call, cst.Call)
        if code(call.func).removesuffix(".forward") not in facts.model_keys:
            continue
        for arg in call.args:
            for name in _read_names(recording, arg.value, inner):
                bound = _bound_outside(recording, name, inner)
                if bound is not None:
                    return call, name, bound
    return None


def _read_names(recording: Recording, value: cst.BaseExpression, inner: cst.CSTNode) -> list[str]:
    """``features``, ``trajs`` of ``trajs[:, t, :]``, and of a name bound to such in ``inner``."""
    names = [value] if isinstance(value, cst.Name) else [value.value] if isinstance(value, cst.Subscript) else []
    found = []
    for name in names:
        if not isinstance(name, cst.Name):
            continue
        found.append(name.value)
        here = [v for s, v in recording.analysis.source.assignments.get(name.value, []) if _inside(recording, s, inner)]
        found += [v.value.value for v in here if isinstance(v, cst.Subscript) and isinstance(v.value, cst.Name)]
    return found


def _bound_outside(recording: Recording, name: str, inner: cst.CSTNode) -> int | None:
    """The line binding the tensor ``name`` once, outside ``inner`` (and never in it); None for
    a name ``inner`` binds, a function, or one bound to no tensor-making value."""
    bindings = recording.analysis.source.assignments.get(name, [])
    if not bindings or any(_inside(recording, statement, inner) for statement, _ in bindings):
        return None
    if any(
        isinstance(statement, (cst.For, cst.AugAssign)) or isinstance(value, (cst.Lambda, cst.Integer, cst.Float, cst.SimpleString))
        for statement, value in bindings
    ):
        return None
    return recording.line(bindings[0][0])


def _inside(recording: Recording, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    return node is outer or any(a is outer for a in recording.analysis.source.ancestors(node))


def _short(call: cst.Call) -> str:
    text = " ".join(code(call).split())
    return text if len(text) <= 40 else f"{code(call.func)}(...)"
