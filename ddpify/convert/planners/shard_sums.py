"""Sums over this rank's shard divided by the size of the whole dataset.

``running_corrects += (preds == labels).sum()`` in a loop over the sharded training loader adds
up one rank's shard, ``running_corrects / len(train_set)`` then divides it by every sample: under
DDP the accuracy (or mean loss) each rank computes, and rank 0 prints, is about
``1/world_size`` of the one-process value. The sum is not the problem (each rank's partial sum
is what DDP scripts keep), the division by the whole dataset is; dividing by ``len(loader)``
(this rank's number of batches) stays right and is not reported."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.file_writes import recording_statement
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import callee_name, code, is_simple_reference, of_types


def report(recording: Recording, facts: Facts) -> None:
    dataflow = recording.analysis.dataflow
    sharded = {f.call for f in facts.loaders.values() if f.role == "train"}
    sources = [s for s in dataflow.sources if s.node in sharded]
    if not sources:
        return  # nothing sharded here: sums cover the whole dataset
    loaders = {v.key for v in facts.loader_variables}
    reported: set[int] = set()
    for accumulate in recording.analysis.source.of_types(cst.AugAssign):
        assert isinstance(accumulate, cst.AugAssign)
        if not (isinstance(accumulate.operator, cst.AddAssign) and is_simple_reference(accumulate.target)):
            continue
        if not any(dataflow.trains_during(source, accumulate) for source in sources):
            continue  # not in a loop over a sharded loader's batches (an evaluation loop)
        total = code(accumulate.target)
        scope = recording.function_of(accumulate) or recording.module
        for division in of_types(scope, cst.BinaryOperation):
            if not (isinstance(division.operator, cst.Divide) and _reads(division.left, total)):
                continue
            size = whole_dataset_size(recording, division.right, loaders)
            statement = recording_statement(recording, division)
            line = recording.line(statement)
            if size is None or line in reported or recording.line(division) <= recording.line(accumulate):
                continue
            reported.add(line)
            facts.manual.append(
                ManualItem(
                    line,
                    f"{total} adds up batches of this rank's shard of the training data (line {recording.line(accumulate)}), "
                    f"but {code(division)} divides it by {size}, the size of the whole dataset: under DDP the value each rank "
                    "computes (and rank 0 prints or acts on) is about 1/world_size of the one-process value",
                    f"where {total} sums the sharded training loader, sum it over the ranks before dividing (t = "
                    f"torch.tensor(float({total}), device=ddpify.device()); torch.distributed.all_reduce(t); {total} = "
                    "t.item()), or divide by the shard's size (len(loader.sampler)); sums over an evaluation loader (whole on "
                    "every rank) stay as they are",
                )
            )


def _reads(expression: cst.BaseExpression, key: str) -> bool:
    """``total``, ``total.double()``, ``float(total)``, ``100. * total``: the sum itself."""
    return any(code(node) == key for node in of_types(expression, cst.Name, cst.Attribute))


def whole_dataset_size(recording: Recording, size: cst.BaseExpression, loaders: set[str]) -> str | None:
    """``len(train_set)``, ``len(loader.dataset)``, ``sizes[phase]`` with ``sizes = {x:
    len(sets[x]) ...}``, ``n_train = len(train_set)``: a dataset's length, as text; not
    ``len(loader)`` (this rank's number of batches)."""
    if isinstance(size, cst.Call):
        return code(size) if _dataset_length(size, loaders) else None
    root = size.value if isinstance(size, cst.Subscript) else size
    if not is_simple_reference(root):
        return None
    for _, value in recording.analysis.source.assignments.get(code(root), []):
        if isinstance(value, (cst.DictComp, cst.ListComp)):
            value = value.value if isinstance(value, cst.DictComp) else value.elt
        if isinstance(value, cst.Call) and _dataset_length(value, loaders):
            return f"{code(size)} ({code(value)})"
    return None


def _dataset_length(call: cst.Call, loaders: set[str]) -> bool:
    if callee_name(call) != "len" or len(call.args) != 1:
        return False
    measured = call.args[0].value
    base = measured.value if isinstance(measured, cst.Subscript) else measured
    return code(base) not in loaders and not code(base).endswith(("loader", "sampler"))
