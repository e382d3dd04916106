"""Values every rank must agree on: a metric each rank computed from its own shard, averaged; a
decision each rank took on its own data, made one for all."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from ._process_group import is_distributed, world_size

__all__ = ["mean_over_ranks", "any_rank", "all_ranks"]


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


def any_rank(value: Any) -> bool:
    """Whether ``value`` is true on any rank, the same answer on every rank.

    ``if ddpify.any_rank(bad >= patience): break``: a rank that left a training loop alone would
    leave the others waiting in the next gradient all-reduce; with this every rank leaves as soon
    as one would (a NaN loss, a time budget spent, a shard's early stop). Every rank must call it
    the same number of times. One process: ``bool(value)``. Reduced on the CPU (gloo)."""
    if not is_distributed():
        return bool(value)
    flag = torch.tensor(1 if value else 0, dtype=torch.int32)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def all_ranks(value: Any) -> bool:
    """Whether ``value`` is true on every rank, the same answer on every rank:
    ``while ddpify.all_ranks(time.time() - start < budget):`` runs while every rank would."""
    return not any_rank(not value)
