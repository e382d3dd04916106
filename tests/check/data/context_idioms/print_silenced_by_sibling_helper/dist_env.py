"""Process-group set-up of this toy project: other ranks stop printing."""

import builtins
import os

import torch
import torch.distributed as dist


def _quiet_unless(is_first):
    original = builtins.print

    def gated(*args, **kwargs):
        if is_first or kwargs.pop("force", False):
            original(*args, **kwargs)

    builtins.print = gated


def start(args):
    args.rank = int(os.environ["RANK"])
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group("nccl")
    _quiet_unless(args.rank == 0)
