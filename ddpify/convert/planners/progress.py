"""Progress counts of this rank's batches set against the size of the whole dataset.

``print(f"[{batch_idx * len(data)}/{len(train_loader.dataset)}]")`` in a loop over the sharded
training loader (PyTorch's MNIST example), or ``i * len(x) / len(loader.dataset)``: the count
is the samples *this rank* has seen, the size is every sample, so under DDP the progress stops
at about ``1/world_size`` (50% on 2 ranks). ``100. * batch_idx / len(train_loader)`` alone is
right (this rank's batches over its own number of batches) and is not reported.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import callee_name, code, of_types


def report(recording: Recording, facts: Facts) -> None:
    dataflow = recording.analysis.dataflow
    sharded = [f for f in facts.loaders.values() if f.role == "train"]
    sources = [s for s in dataflow.sources if s.node in {f.call for f in sharded}]
    if not sources:
        return  # nothing sharded here: every count covers the whole dataset
    datasets = {code(f.call.args[0].value) for f in sharded if f.call.args and f.call.args[0].keyword is None}
    loaders = {v.key for v in facts.loader_variables if v.role == "train"} | {name for s in sources for name in s.names}
    reported: set[int] = set()
    for loop in recording.analysis.source.of_types(cst.For):
        assert isinstance(loop, cst.For)
        enumerated = _enumerated(loop, loaders)
        if enumerated is None:
            continue
        index, loader = enumerated
        for statement in of_types(loop.body, cst.SimpleStatementLine):
            count = next((p for p in of_types(statement, cst.BinaryOperation) if _counts_samples(p, index)), None)
            size = next((c for c in of_types(statement, cst.Call) if _whole_dataset(c, loaders, datasets)), None)
            line = recording.line(statement)
            if count is None or size is None or line in reported:
                continue
            reported.add(line)
            facts.manual.append(
                ManualItem(
                    line,
                    f"{code(count)} counts the samples of this rank's batches, but {code(size)} is the whole dataset: "
                    "under DDP each rank sees only its shard, so this progress ends at about 1/world_size "
                    "(50% on 2 ranks)",
                    f"set the count against this rank's shard, len({loader}.sampler) (the sampler ddpify.distributed_loader "
                    f"gives it), or count every rank's samples ({code(count)} * ddpify.world_size()); 100. * {index} / "
                    f"len({loader}), this rank's batches over its own number of batches, is right as it is",
                )
            )


def _enumerated(loop: cst.For, loaders: set[str]) -> tuple[str, str] | None:
    """``(i, loader)`` of ``for i, batch in enumerate(loader)`` over a sharded loader (training
    or not: either way it yields this rank's shard)."""
    over = loop.iter
    if not (isinstance(over, cst.Call) and callee_name(over) == "enumerate" and over.args and isinstance(loop.target, cst.Tuple)):
        return None
    if code(over.args[0].value) not in loaders:
        return None
    first = loop.target.elements[0].value if loop.target.elements else None
    return (first.value, code(over.args[0].value)) if isinstance(first, cst.Name) else None


def _counts_samples(product: cst.BinaryOperation, index: str) -> bool:
    """``i * len(x)``, ``batch_idx * args.batch_size``: batches so far times a batch's size."""
    if not isinstance(product.operator, cst.Multiply):
        return False
    for mine, other in ((product.left, product.right), (product.right, product.left)):
        if isinstance(mine, cst.Name) and mine.value == index:
            return isinstance(other, cst.Call) and callee_name(other) == "len" or "batch" in code(other).lower()
    return False


def _whole_dataset(call: cst.Call, loaders: set[str], datasets: set[str]) -> bool:
    """``len(train_loader.dataset)``, or ``len(train_set)`` of the set a sharded loader reads."""
    if callee_name(call) != "len" or len(call.args) != 1:
        return False
    measured = code(call.args[0].value)
    owner, _, attribute = measured.rpartition(".")
    return attribute == "dataset" and (owner in loaders or owner.endswith("loader")) or measured in datasets


# What a disabled tqdm bar stops keeping: its count stays 0 (``-val_loss / pbar.n`` divides by zero).
_COUNTS = frozenset({"n", "format_dict", "last_print_n"})


def keep_counted_bars(recording: Recording, facts: Facts) -> None:
    """``pbar = tqdm(total=len(loader.dataset))`` whose count the script reads (``pbar.n``):
    a bar disabled off rank 0 counts nothing there, so it stays as it is (shown by every rank),
    and the report says so."""
    source = recording.analysis.source
    for call in source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        statement = source.parent(call)
        if not (source.qualified(call.func) & names.TQDM and isinstance(statement, cst.Assign) and statement.value is call):
            continue
        bars = {code(t.target) for t in statement.targets}
        home = source.enclosing_function(call)  # a bar of the same name in another function is another bar
        read = next(
            (
                a
                for a in source.of_types(cst.Attribute)
                if a.attr.value in _COUNTS and code(a.value) in bars and source.enclosing_function(a) is home
            ),
            None,
        )
        if read is None:
            continue
        facts.kept_writes.add(call)
        facts.manual.append(
            ManualItem(
                recording.line(call),
                f"{code(read)} (line {recording.line(read)}) reads the progress bar's count, which a bar disabled off rank 0 does "
                "not keep: the bar is left on every rank",
                "to show it once, give it file=open(os.devnull, 'w') on ranks other than 0 (it still counts), or read the "
                "count from a variable of your own",
            )
        )
