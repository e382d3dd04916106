"""Issue 21: a rank test in the caller. A method whose only caller in the file runs on rank 0
prints on rank 0 only; a library function of the same name (``torch.log(x)``, ``np.log``,
``math.log``) called on every rank is no call of that method."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import math

import numpy as np
import torch
import torch.distributed as dist


class LossLogger:
    def __init__(self):
        self.loss = []

    def log(self, v, display=False):
        self.loss.append(v)
        if display:
            print(f"loss {{v:.3f}}")


def schedule(beta):
    return {library}


def train(args, model, logger, loader):
    for step, x in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        {guard}
            logger.log(loss.item(), display=not step % 100)


def main(args):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    train(args, model, LossLogger(), [])
"""


@pytest.mark.parametrize(
    ("library", "guard", "report"),
    [
        ("torch.log(beta)", "if args.local_rank == 0:", False),
        ("np.log(beta) + math.log(2.0)", "if dist.get_rank() == 0:", False),
        ("torch.log(beta)", "if True:", True),
        ("torch.log(beta)", "if step % 10 == 0:", True),
    ],
)
def test_method_called_under_a_rank_test_only(library: str, guard: str, report: bool) -> None:
    source = _SCRIPT.format(library=library, guard=guard)
    lines = {f.line for f in check_source(source, "train.py", rules=select_rules(["DDP012"])).findings}
    assert (15 in lines) is report
