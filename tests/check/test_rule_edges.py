"""Paths of rules that their own VALID/INVALID examples do not reach."""

from __future__ import annotations

from ddpify.check.engine import check_source
from ddpify.check.rules import ALL_RULES

SEED_THROUGH_PARAMETER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def set_seed(seed):
    torch.manual_seed(seed)


def same_seed(seed):
    torch.manual_seed(seed)


def main():
    dist.init_process_group("nccl")
    set_seed(42 + dist.get_rank())
    same_seed(42)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.1)))
"""


def test_seed_passed_per_rank_through_a_parameter() -> None:
    """DDP011 follows a seed parameter to the call sites: ``set_seed(42 + rank)`` is per rank."""
    rule = next(r for r in ALL_RULES if r.code == "DDP011")
    findings = check_source(SEED_THROUGH_PARAMETER, rules=[rule]).findings
    assert [(f.code, f.line) for f in findings] == [("DDP011", 11)]
