"""The calls that make, pass on and take batches, by qualified name or spelling: ``DataLoader``,
``enumerate(loader)``, ``tqdm(loader)``, ``iter(loader)``, ``next(it)`` / ``it.__next__()``, and the
counting iterables (``range(n)``) that are no data. Shared by the batch walk (``batches``), the data
flow and the rules that follow loaders."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.tree import cstutil

# The calls that make a loader.
DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader", "ddpify.runtime.distributed_loader"})
TQDM = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "tqdm.tqdm.tqdm", "tqdm.rich.tqdm"})
# Calls that hand out the batches of the iterable they are given.
WRAPPERS = TQDM | {
    "builtins.enumerate",
    "builtins.iter",
    "builtins.zip",
    "itertools.islice",
    "itertools.cycle",
    "itertools.chain",
    "ddpify.runtime.shard",
    "ddpify.runtime.unsharded",
}
_COUNTERS = frozenset({"builtins.range", "itertools.count", "tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange", "tqdm.std.trange"})


def counts(source: Source, iterable: cst.BaseExpression, *, follow: bool = True) -> bool:
    """``range(n)``, ``enumerate(range(n))``, a literal: a loop that counts, not one over data;
    also a plain name bound only to such a value (``pbar = tqdm(range(args.iter))``, ``with
    trange(n) as pbar``)."""
    while isinstance(iterable, cst.Call) and (inner := loader_inner(source, iterable)) is not None:
        iterable = inner
    if isinstance(iterable, cst.Name) and follow:  # also `with trange(n) as pbar: for step in pbar:`
        values = [v for _, v in source.assignments.get(iterable.value, [])] + [
            item.item
            for item in source.of_types(cst.WithItem)
            if item.asname is not None and cstutil.code(item.asname.name) == iterable.value
        ]
        return bool(values) and all(v is not None and counts(source, v, follow=False) for v in values)
    if isinstance(iterable, cst.Call):
        return bool(source.qualified(iterable.func) & _COUNTERS)
    return isinstance(iterable, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.SimpleString, cst.Integer))


def loader_step(source: Source, node: cst.CSTNode) -> cst.BaseExpression | None:
    """``enumerate(loader)``, ``tqdm(loader)``, ``iter(loader)``: the same batches."""
    parent = source.parent(node)
    if isinstance(parent, cst.Arg) and parent.value is node and parent.keyword is None:
        call = source.parent(parent)
        if isinstance(call, cst.Call) and source.qualified(call.func) & WRAPPERS:
            return call
    return None


def next_taken(source: Source, call: cst.Call) -> cst.BaseExpression | None:
    """The iterator ``call`` takes one item from: ``next(it)``, ``it.__next__()``."""
    if call.args and "builtins.next" in source.qualified(call.func):
        return call.args[0].value
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "__next__" and not call.args:
        return func.value
    return None


def loader_inner(source: Source, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The iterable inside ``enumerate(loader)``, ``tqdm(loader)``..."""
    if isinstance(node, cst.Call) and node.args and source.qualified(node.func) & WRAPPERS:
        return node.args[0].value
    return None
