"""The DataLoaders an object of the project keeps and hands batches from: a balanced-batch
dataset class whose ``__init__`` builds one loader per data source and whose ``get_batch()``
takes the next batch of each (deep-text-recognition-benchmark's ``Batch_Balanced_Dataset``).
``ddpify.shard(obj)`` shards them in place: each loader it keeps (as an attribute, or in a
list, tuple or dict attribute) is replaced by its sharded rebuild, and each iterator it
already opened over one (``iter(loader)`` kept beside it) by an iterator over the rebuild."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.utils.data import DataLoader
from torch.utils.data.dataloader import _BaseDataLoaderIter


def shard_held(holder: Any, shard: Callable[[DataLoader], Any]) -> bool:
    """Shard, in place, the loaders ``holder`` keeps (see the module docstring); whether it
    kept any. Iterators are matched to their loader by the dataset they read."""
    state = getattr(holder, "__dict__", None)
    if not isinstance(state, dict):
        return False
    rebuilt: dict[int, Any] = {}  # id(dataset) -> the sharded loader over it
    for name, value in list(state.items()):
        replaced = _each(value, lambda v: shard(v) if isinstance(v, DataLoader) else v)
        if replaced is not value:
            state[name] = replaced
            olds, news = _elements(value), _elements(replaced)
            for i, old in enumerate(olds):
                if isinstance(old, DataLoader):
                    rebuilt[id(old.dataset)] = news[i]
    if not rebuilt:
        return False
    for name, value in list(state.items()):
        reopen = lambda v: iter(rebuilt[id(v._dataset)]) if isinstance(v, _BaseDataLoaderIter) and id(v._dataset) in rebuilt else v  # noqa: E731
        state[name] = _each(value, reopen)
    return True


def _each(value: Any, change: Callable[[Any], Any]) -> Any:
    """``change`` applied to ``value``, or to each element of a list, tuple or dict; the same
    object when nothing changed."""
    if type(value) in (list, tuple):
        changed = [change(v) for v in value]
        return value if all(changed[i] is v for i, v in enumerate(value)) else type(value)(changed)
    if type(value) is dict:
        changed_items = {k: change(v) for k, v in value.items()}
        return value if all(changed_items[k] is v for k, v in value.items()) else changed_items
    return change(value)


def _elements(value: Any) -> list[Any]:
    if type(value) in (list, tuple):
        return list(value)
    if type(value) is dict:
        return list(value.values())
    return [value]
