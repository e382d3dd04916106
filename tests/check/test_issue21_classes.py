"""Issue 21's false-positive and miss classes on unseen DDP code, each with valid and invalid
spellings (several per class, also ones no corpus file uses). ``report`` says whether the rule
must report the snippet; sibling-module cases write a small project under ``tmp_path``."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_DDP = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def _codes(source: str, path: str = "<string>") -> set[str]:
    return {f.code for f in check_source(source, path, rules=select_rules(["DDP"])).findings}


# ------------------------------------------------------------------ single-node designs (DDP006)
_REDUCE_MEAN = (
    _DDP
    + """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
{extra}


def reduce_mean(tensor, nprocs):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    {divide}
    return rt


def main():
    args = parser.parse_args()
    {count}
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(args.local_rank)
    model = DDP(torch.nn.Linear(2, 2).cuda(), device_ids=[args.local_rank])
    loss = model(torch.randn(2, 2).cuda()).sum()
    reduced = reduce_mean(loss, {passed})
    if args.local_rank == 0:
        torch.save(model.module.state_dict(), "model.pt")
"""
)


@pytest.mark.parametrize(
    ("extra", "divide", "count", "passed", "report"),
    [
        ("", "rt /= nprocs", "args.nprocs = torch.cuda.device_count()", "args.nprocs", False),
        ("", "rt = rt / nprocs", "ngpus = torch.cuda.device_count()", "ngpus", False),
        ("", "rt /= nprocs", "world = torch.cuda.device_count()", "nprocs=world", False),
        # a node rank input: the GPU count is per node, the guard is per node
        ('parser.add_argument("--node_rank", type=int, default=0)', "rt /= nprocs", "ngpus = torch.cuda.device_count()", "ngpus", True),
        # the average is over the real world size: nothing says one node
        ("", "rt /= nprocs", "ngpus = dist.get_world_size()", "ngpus", True),
    ],
)
def test_local_gpu_count_as_world_is_single_node(extra: str, divide: str, count: str, passed: str, report: bool) -> None:
    source = _REDUCE_MEAN.format(extra=extra, divide=divide, count=count, passed=passed)
    assert ("DDP006" in _codes(source)) is report
