"""The ``DataLoader(...)`` arguments that rebuild a loader the script built (``shard``): kept
apart from the sharding itself, which decides the sampling arguments anew. Also which loaders
such a rebuild reproduces: ``DataLoader`` itself, and subclasses that only change how one is
built."""

from __future__ import annotations

import inspect
from typing import Any, cast

from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

DATALOADER_SIGNATURE = inspect.signature(DataLoader)
# What decides sampling: rebuilt by shard() from the loader's sampler, never copied as is.
_SAMPLING_ARGUMENTS = frozenset({"dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "drop_last"})
# What a class body holds besides its methods: a subclass defining only these and __init__
# batches with DataLoader's own code.
_CLASS_METADATA = frozenset(
    {
        "__init__",
        "__module__",
        "__qualname__",
        "__doc__",
        "__dict__",
        "__weakref__",
        "__annotations__",
        "__firstlineno__",
        "__static_attributes__",
        "__parameters__",
        "__orig_bases__",
    }
)
_OWN_STATE = frozenset(vars(DataLoader(cast(Any, ()))))  # what DataLoader.__init__ stores on an instance


def rebuildable(loader: Any) -> bool:
    """``loader`` batches with DataLoader's own code, so its arguments rebuild it: a plain
    ``DataLoader``, or a subclass that only changes how one is built (Conv-TasNet's
    ``AudioDataLoader``, whose ``__init__`` sets ``collate_fn``). One that overrides
    ``__iter__`` or adds methods may batch its own way: it is not rebuilt."""
    if not isinstance(loader, DataLoader):
        return False
    for klass in type(loader).__mro__:
        if klass is DataLoader:
            return True
        if set(vars(klass)) - _CLASS_METADATA:
            return False
    return False


def extra_state(loader: DataLoader) -> dict[str, Any]:
    """What a subclass's ``__init__`` stored on ``loader`` besides DataLoader's own attributes:
    carried over to the rebuilt loader, so code reading it still finds it."""
    return {name: value for name, value in vars(loader).items() if name not in _OWN_STATE}


def loader_arguments(loader: DataLoader) -> dict[str, Any]:
    """DataLoader arguments that rebuild ``loader``: what it stores under each parameter's
    name, plus how it samples (``shuffle`` when its sampler is the one DataLoader made itself)."""
    arguments: dict[str, Any] = {"dataset": loader.dataset}
    for name, parameter in DATALOADER_SIGNATURE.parameters.items():
        if name not in _SAMPLING_ARGUMENTS and hasattr(loader, name):
            value = getattr(loader, name)
            if value is not parameter.default:
                arguments[name] = value
    if loader.batch_size is None and loader.batch_sampler is not None:
        arguments["batch_sampler"] = loader.batch_sampler  # the user's own
        return arguments
    arguments["batch_size"] = loader.batch_size
    arguments["drop_last"] = loader.drop_last
    if _is_default_sampler(loader, RandomSampler):
        arguments["shuffle"] = True
    elif not _is_default_sampler(loader, SequentialSampler):
        arguments["sampler"] = loader.sampler
    return arguments


def _is_default_sampler(loader: DataLoader, kind: type) -> bool:
    """Whether ``loader.sampler`` is the one ``DataLoader(shuffle=...)`` made, not a user's
    (a RandomSampler with replacement or num_samples must be kept as it is)."""
    sampler = loader.sampler
    if type(sampler) is not kind or getattr(sampler, "data_source", None) is not loader.dataset:
        return False
    if kind is RandomSampler:
        random: Any = sampler
        return not random.replacement and random._num_samples is None and random.generator is loader.generator
    return True
