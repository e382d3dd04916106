"""The last net under the loaders: a wrapped model trains, yet the conversion sharded none of
its data and no other report item says why. Then the batches reaching backward() come from
code ddpify could not rewrite (an iterator class of another module, a loader that is a global
of a third file), and unless that code splits its data by rank, every rank trains on the same
data: no speed-up, and with one seed for all ranks, identical batches. Said once, at the
first backward, with what is known about where those batches come from."""

from __future__ import annotations

import libcst as cst

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
    if backward is None or not facts.wraps_models() or facts.already_converted:
        return
    sharded = (
        any(f.role in ("train", "decided") for f in facts.loaders.values())
        or facts.helper_loaders
        or facts.rank_generators
        or facts.trained_elsewhere
        or facts.cut_batches
    )
    if sharded or any(any(said in m.why for said in _ALREADY_SAID) for m in facts.manual):
        return
    training = [s.evidence for s in recording.analysis.dataflow.sources if s.role is Role.TRAIN and s.kind in _DATA]
    where = training[0] if training else _taken_next_to(recording, backward)
    if where is None:
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
        if "builtins.next" in source.qualified(call.func) and call.args:
            return f"its batches are taken by {code(call)} at line {source.line(call)}, from code this file does not show"
    return None
