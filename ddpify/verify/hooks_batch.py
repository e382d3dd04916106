"""Recorder hook for the evidence behind a per-process batch: tensors the script builds during
training with the length of a per-process loader's batch (``valid = torch.ones(batch_size, 1)``,
``z = torch.randn(batch_size, nz)``).

The converter keeps a loader's per-process batch (the global batch then grows world_size
times) only where the batch size also sizes such tensors, since splitting the batch would break
them. Whether that held in this run is what ``judge_data.batch`` reads: without a single such
tensor, nothing needed the per-process batch and the run trains differently from the
one-process script for no reason. Only the building functions count, not views: a
``x.view(x.size(0), -1)`` follows the batch whatever its length.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from ddpify.verify.recording import Recorder, called_from_torch, user_frame, where

__all__ = ["install"]

_FACTORIES = ("zeros", "ones", "full", "empty", "rand", "randn", "randint", "arange", "normal")
_METHODS = ("new_zeros", "new_ones", "new_full", "new_empty")
# Functions whose plain int arguments are values, not sizes: their size is a sequence (or ``size=``).
_SIZE_IN_A_SEQUENCE = frozenset({"randint", "full", "normal", "new_full"})


def _sizes(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> set[int]:
    """The ints a call gives as sizes."""
    found: set[int] = set()
    for value in (*args, kwargs.get("size")):
        if isinstance(value, (tuple, list, torch.Size)):
            found.update(v for v in value if isinstance(v, int))
        elif isinstance(value, int) and not isinstance(value, bool) and name not in _SIZE_IN_A_SEQUENCE:
            found.add(value)
    return found


def install(rec: Recorder) -> None:
    """Wrap the tensor-building functions: once per site, a build during training (gradients
    on) with a per-process loader's batch length is emitted as a ``batch-sized`` event."""
    seen: set[str] = set()

    def watch(name: str, original: Any, skip: int) -> Any:
        @functools.wraps(original)
        def build(*args: Any, **kwargs: Any) -> Any:
            if rec.per_process_batches and rec.training and torch.is_grad_enabled() and not called_from_torch(1):
                hit = _sizes(name, args[skip:], kwargs) & rec.per_process_batches
                site = where(user_frame(1))
                if hit and site not in seen:
                    seen.add(site)
                    rec.emit("batch-sized", fn=name, site=site, length=min(hit))
            return original(*args, **kwargs)

        return build

    for name in _FACTORIES:
        setattr(torch, name, watch(name, getattr(torch, name), 0))
    for name in _METHODS:
        setattr(torch.Tensor, name, watch(name, getattr(torch.Tensor, name), 1))
