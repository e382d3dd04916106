"""Batch sources that are not ``DataLoader``s (``ddpify.analysis.dataflow``): no sampler can
shard them, so the conversion says what it did and did not do.

- A random index draw that selects the training batches (``ix = torch.randint(len(data) -
  block, (batch,))`` in a ``get_batch()``): every rank would draw the same indices. With
  ``torch.randint`` / ``torch.randperm`` each rank draws its own:
  ``generator=ddpify.rank_generator()`` (seeded from the base seed and the rank; ``None``, the
  default generator, with one process). When the same draw also feeds evaluation under
  ``no_grad``, only the draws made with gradients enabled use it, so every rank still
  evaluates on the same batches and takes the same decisions (best checkpoint, early stop).
  Other draws (numpy, ``random``), or draws that also feed other code, are reported.
- An iterator or batch function of this file (a class with ``__iter__``, a generator, a
  ``get_batch()`` slicing data in order) that training takes its batches from: reported with
  what to write; nothing claims it was sharded.

A draw is rewritten only when the models it trains are wrapped: different batches per rank
without averaged gradients would give every rank its own model.
"""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.analysis.dataflow import BatchSource, Consumer, DataFlow, Kind, Role, Use
from ddpify.convert.fact_types import Facts, NodeRewrite, item
from ddpify.convert.record import Recording
from ddpify.convert.rewrites import RT
from ddpify.findings import ManualItem
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code, keyword_value, of_types

_TORCH_DRAWS = frozenset({"torch.randint", "torch.randperm"})
# Modules whose functions draw from one global stream a rank can be given its own copy of.
_GLOBAL_RANDOM_MODULES = frozenset({"numpy.random", "random"})


def plan(recording: Recording, facts: Facts) -> None:
    """``Facts.rank_generators`` for the random draws it can give a per-rank generator; a
    report item for every other non-DataLoader batch source that trains."""
    if not (recording.loader_calls or recording.optimizer_calls or recording.first_backward):
        return
    dataflow = recording.analysis.dataflow
    for source in dataflow.sources:
        if source.role is not Role.TRAIN:
            continue
        if source.kind is Kind.RANDOM_INDEX:
            _random_draw(recording, facts, dataflow, source)
        elif source.kind is Kind.CUSTOM_ITERATOR:
            if not _shard_iterator_class(recording, facts, source):
                facts.manual.append(_custom_iterator(source))


def _shard_iterator_class(recording: Recording, facts: Facts, source: BatchSource) -> bool:
    """A batch iterator class of this file whose batches train a wrapped model: each place that
    builds one gets ``ddpify.shard(Batches(...), only_when_training=True)``, which cuts every
    batch across the ranks in the passes that train and leaves evaluation passes whole
    (``ddpify.runtime._batches``). A generator or batch function stays reported: its one pass
    cannot be replayed, and what it reads may be sharded already."""
    klass = source.node
    if not isinstance(klass, cst.ClassDef) or not _models_wrapped(recording, facts):
        return False
    name = klass.name.value
    calls = [c for c in recording.analysis.source.calls_by_callee.get(name, []) if isinstance(c.func, cst.Name) and c.func.value == name]
    if not calls or any(_sharded_already(recording, c) for c in calls):
        return False
    what = (
        f"{name} is a batch iterator of this file: {RT}.shard({name}(...), only_when_training=True) cuts each of its batches "
        "across the ranks in the passes that train (the one-process batch split, the same steps; where the ranks draw different "
        "batches, an unseeded shuffle, each keeps its own whole, with a warning); evaluation passes read it whole"
    )
    for call in calls:
        facts.node_rewrites[call] = NodeRewrite(_sharded_iterator, what)
    facts.cut_batches = True
    return True


def _sharded_already(recording: Recording, call: cst.Call) -> bool:
    parent = recording.parent(recording.parent(call) or call)
    return isinstance(parent, cst.Call) and "shard" in code(parent.func)


def _sharded_iterator(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    call = snippets.expression("shard_iterator", rt=RT)
    assert isinstance(call, cst.Call)
    return call.with_changes(args=[call.args[0].with_changes(value=node), *call.args[1:]])


def _custom_iterator(source: BatchSource) -> ManualItem:
    node = source.node
    if isinstance(node, cst.ClassDef):
        what, todo = (
            f"{node.name.value} is a batch iterator of this file, not a DataLoader",
            f"make {node.name.value}.__iter__ yield every ddpify.world_size()-th batch starting at ddpify.rank(), "
            "or build the batches with a DataLoader (ddpify.distributed_loader(dataset, batch_size=...) shards it)",
        )
    else:
        name = node.name.value if isinstance(node, cst.FunctionDef) else code(node)[:40]
        what, todo = (
            f"{name}() hands out the training batches, not a DataLoader",
            f"make {name}() give each rank every ddpify.world_size()-th batch starting at ddpify.rank(), "
            "or build the batches with a DataLoader (ddpify.distributed_loader(dataset, batch_size=...) shards it)",
        )
    return item(source.line, f"{what}: every rank trains on the same batches ({source.evidence}); not sharded", todo)


def _random_draw(recording: Recording, facts: Facts, dataflow: DataFlow, source: BatchSource) -> None:
    call = source.node
    assert isinstance(call, cst.Call)
    line = recording.line(call)
    drawn = code(call.func)
    why = f"{drawn}() at line {line} draws the training batches ({source.evidence}): every rank would draw the same ones"
    generator = _generator(recording, dataflow, source, call)
    if generator is None:
        return  # converted already
    held = [h.key for h in facts.held_models if _feeds(dataflow, source, [s.node for s in h.model.forward_calls])]
    if isinstance(generator, str) or held or not _models_wrapped(recording, facts):
        reason = (
            f"{', '.join(held)} is not wrapped"
            if held
            else "no model it trains is wrapped"
            if not isinstance(generator, str)
            else generator
        )
        facts.manual.append(
            item(
                line,
                f"{why}; left as it is: {reason}",
                "give each rank its own draw once the model is wrapped: torch.randint(..., generator=ddpify.rank_generator()); "
                "numpy.random / random: ddpify.rank_random(np.random).choice(...) (streams seeded with the seed + ddpify.rank())",
            )
        )
        return
    facts.rank_draws.add(call)
    if recording.qualified(call.func) & _TORCH_DRAWS:
        facts.rank_generators[call] = generator
    else:
        what = f"{drawn}() draws training batches: each rank draws its own from {code(generator)}"
        facts.node_rewrites[call] = NodeRewrite(lambda node: _on_stream(node, generator), what)
    batch = _global_batch_item(recording, call)
    if not any(m.line == batch.line and m.todo == batch.todo for m in facts.manual):  # draws of one batch size: one item
        facts.manual.append(batch)


def _on_stream(node: cst.CSTNode, stream: cst.BaseExpression) -> cst.CSTNode:
    """``np.random.choice(...)`` -> ``ddpify.rank_random(np.random).choice(...)``."""
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    return node.with_changes(func=node.func.with_changes(value=stream))


def _global_batch_item(recording: Recording, call: cst.Call) -> ManualItem:
    """Per-rank draws keep each rank's batch: a step then averages world_size times the
    one-process batch (a DataLoader keeps the global batch instead). Said at the size's own
    assignment when it has one at module level (where it is changed), else at the draw."""
    line = recording.line(call)
    size = _drawn_size(recording, call)
    if size is None:
        return item(
            line,
            f"each rank draws its own batch with {code(call.func)}() (line {line}): one optimizer step now averages "
            "world_size batches, where one process used one",
            "to keep the one-process batch, draw batch // ddpify.world_size() samples per rank; or keep it and scale the "
            "learning rate for the larger batch",
        )
    text = code(size)
    example = (
        f"e.g. {text} = max(1, {text} // ddpify.world_size()) once it is set"
        if cstutil.is_simple_reference(size)
        else f"max(1, {text} // ddpify.world_size()) in the draw"
    )
    bound = recording.analysis.source.assignments.get(text, []) if isinstance(size, cst.Name) else []
    at = recording.line(bound[0][0]) if len(bound) == 1 and recording.function_of(bound[0][0]) is None else line
    return item(
        at,
        f"each rank draws its own {text} samples per step ({code(call.func)}() at line {line}): with N ranks one optimizer "
        f"step averages N x {text} samples, where one process used {text}",
        f"to keep the one-process batch, draw {text} // ddpify.world_size() per rank ({example}); or keep it and scale the "
        "learning rate for the larger batch",
    )


# Where module functions of numpy.random / random take the number drawn: (keyword, position).
_SIZE_ARGUMENTS = {"choice": ("size", 1), "randint": ("size", 2), "sample": ("k", 1), "choices": ("k", -1)}


def _drawn_size(recording: Recording, call: cst.Call) -> cst.BaseExpression | None:
    """The batch dimension of ``torch.randint(high, (batch, ...))`` / ``size=(batch,)``, or the
    number a numpy / ``random`` draw takes (``np.random.choice(n, batch)``, ``random.sample(xs, k)``)."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if not recording.qualified(call.func) & _TORCH_DRAWS:
        keyword, position = _SIZE_ARGUMENTS.get(call.func.attr.value if isinstance(call.func, cst.Attribute) else "", ("size", -1))
        size = keyword_value(call, keyword) or (positional[position] if 0 <= position < len(positional) else None)
        return size.elements[0].value if isinstance(size, (cst.Tuple, cst.List)) and size.elements else size
    size = keyword_value(call, "size")
    if size is None:
        size = positional[-1] if positional and isinstance(positional[-1], (cst.Tuple, cst.List)) else None
    if isinstance(size, (cst.Tuple, cst.List)) and size.elements:
        return size.elements[0].value
    return None


def _generator(recording: Recording, dataflow: DataFlow, source: BatchSource, call: cst.Call) -> cst.BaseExpression | str | None:
    """``ddpify.rank_generator()`` for this draw, or why it cannot have one (None: it has it)."""
    if not recording.qualified(call.func) & _TORCH_DRAWS:
        return _stream(recording, dataflow, source, call)
    existing = keyword_value(call, "generator")
    if existing is not None and any("ddpify.runtime.rank_generator" in recording.qualified(c.func) for c in of_types(existing, cst.Call)):
        return None
    if existing is not None:
        return f"it draws with its own generator ({code(existing)})"
    if keyword_value(call, "device") is not None:
        return "it draws on a device (a generator must live there)"
    shared = _shared_with_evaluation(dataflow, source)
    if isinstance(shared, str) or not shared:
        return shared or snippets.expression("rank_generator", rt=RT)
    return snippets.expression("rank_generator_when_training", rt=RT)


def _stream(recording: Recording, dataflow: DataFlow, source: BatchSource, call: cst.Call) -> cst.BaseExpression | str | None:
    """A module function of ``numpy.random`` or ``random`` (``np.random.choice(n, batch)``): the
    receiver becomes this rank's own stream, ``ddpify.rank_random(np.random)`` (the module
    itself with one process), or why it cannot (None: it has it)."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if receiver is not None and "ddpify.runtime.rank_random" in recording.qualified(getattr(receiver, "func", receiver)):
        return None
    if receiver is None or not recording.qualified(receiver) & _GLOBAL_RANDOM_MODULES:
        return f"{code(call.func)}() draws from no module-level stream a rank can be given"
    shared = _shared_with_evaluation(dataflow, source)
    if isinstance(shared, str):
        return shared
    return snippets.expression("rank_random_when_training" if shared else "rank_random", rt=RT, module=code(receiver))


def _shared_with_evaluation(dataflow: DataFlow, source: BatchSource) -> bool | str:
    """Whether the draw also feeds evaluation under no_grad/inference_mode (the per-rank
    stream then only while gradients are on), or why other code it feeds rules it out."""
    others = [c for c in source.consumers if c.use is not Use.TRAINING]
    if any(c.use is not Use.EVALUATION or not _gradients_off(dataflow, c) for c in others):
        line = next(c.line for c in others if c.use is not Use.EVALUATION or not _gradients_off(dataflow, c))
        return f"the same draw also feeds code at line {line} that does not run under no_grad/inference_mode"
    return bool(others)


def _gradients_off(dataflow: DataFlow, consumer: Consumer) -> bool:
    """Evaluation under no_grad/inference_mode (around it or every call that leads to it),
    where ``torch.is_grad_enabled()`` tells it from training."""
    batches = dataflow.batches
    if batches.no_grad_around(consumer.node) is not None:
        return True
    function = dataflow.source.enclosing_function(consumer.node)
    callers = dataflow.values.callers(function) if function is not None else []
    return bool(callers) and all(batches.no_grad_around(c) is not None for c, _ in callers)


def _feeds(dataflow: DataFlow, source: BatchSource, uses: list[cst.CSTNode]) -> bool:
    return not uses or any(dataflow.trains_during(source, use) for use in uses)


def _models_wrapped(recording: Recording, facts: Facts) -> bool:
    """Some model is wrapped (now or already), and the file ties every optimizer to a model."""
    return bool(facts.wraps_models() or recording.existing_wraps) and not recording.analysis.models.unknown
