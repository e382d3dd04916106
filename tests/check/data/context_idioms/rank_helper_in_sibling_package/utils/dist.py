"""Rank helpers of this toy project."""

import torch.distributed as dist


def world_rank():
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def should_write():
    return world_rank() == 0
