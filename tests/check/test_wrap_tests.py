"""Issue 21: a save or a ``.module`` under a test of whether the model is wrapped. In
``model.module.state_dict() if is_parallel(model) else model.state_dict()`` the plain branch
saves plain keys and the wrapped branch's ``.module`` exists: neither DDP007 nor DDP023."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from utils.torch_utils import is_parallel


def is_wrapped(m):
    return isinstance(m, (torch.nn.DataParallel, DDP))


def unwrap_test(m):
    return type(m) in (torch.nn.parallel.DataParallel, torch.nn.parallel.DistributedDataParallel)


def main(args):
    model = torch.nn.Linear(2, 2)
    if args.distributed:
        dist.init_process_group("nccl")
        model = DDP(model)
    if not args.distributed or dist.get_rank() == 0:
        {save}
"""


@pytest.mark.parametrize(
    ("save", "codes"),
    [
        ('torch.save(model.module.state_dict() if is_parallel(model) else model.state_dict(), "a.pt")', set()),
        ('torch.save(model.module.state_dict() if hasattr(model, "module") else model.state_dict(), "a.pt")', set()),
        ('torch.save({"model": model.state_dict() if not isinstance(model, DDP) else model.module.state_dict()}, "a.pt")', set()),
        ('state = model.module.state_dict() if is_wrapped(model) else model.state_dict()\n        torch.save(state, "a.pt")', set()),
        ('torch.save(model.module.state_dict() if unwrap_test(model) else model.state_dict(), "a.pt")', set()),
        (
            'if type(model) is DDP:\n            torch.save(model.module.state_dict(), "a.pt")\n        else:\n            torch.save(model.state_dict(), "a.pt")',
            set(),
        ),
        # not a test of the wrap, or the wrong branch: the layout still depends on the launch
        ('torch.save(model.module.state_dict() if args.distributed_save else model.state_dict(), "a.pt")', {"DDP007", "DDP023"}),
        ('torch.save(model.state_dict() if is_parallel(model) else model.module.state_dict(), "a.pt")', {"DDP007", "DDP023"}),
        ('torch.save(model.state_dict(), "a.pt")', {"DDP007"}),
    ],
)
def test_save_under_a_wrap_test(save: str, codes: set[str]) -> None:
    found = {f.code for f in check_source(_SCRIPT.format(save=save), "train.py", rules=select_rules(["DDP007", "DDP023"])).findings}
    assert found == codes
