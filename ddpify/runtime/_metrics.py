"""Values every rank must agree on: a metric each rank computed from its own shard, averaged."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from ._process_group import is_distributed, world_size

__all__ = ["mean_over_ranks"]


def mean_over_ranks(value: Any) -> Any:
    """The mean of ``value`` (a number or a tensor) over all ranks, the same on every rank.

    ``scheduler.step(val_loss)`` of a ``ReduceLROnPlateau`` with a loss each rank summed over its
    own shard would lower the learning rate at different epochs on different ranks, and the
    parameters would drift apart; averaged, every rank takes the same decision. A tensor comes
    back on its device and dtype, anything else as a float. One process: ``value`` as it is.
    The reduction runs on the CPU (gloo), so it works whatever device the value is on.
    """
    if not is_distributed():
        return value
    if isinstance(value, torch.Tensor):
        total = value.detach().to(device="cpu", dtype=torch.float64).clone()
    else:
        total = torch.tensor(float(value), dtype=torch.float64)
    dist.all_reduce(total)
    total /= world_size()
    if isinstance(value, torch.Tensor):
        return total.to(device=value.device, dtype=value.dtype)
    return total.item()
