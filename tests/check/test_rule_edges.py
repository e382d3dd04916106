"""Paths of rules that their own VALID/INVALID examples do not reach."""

from __future__ import annotations

import pytest

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
    """DDP011 follows a seed parameter to the call sites: ``set_seed(42 + rank)`` is per rank;
    ``same_seed(42)`` is the finding, at the call that chooses the value (not inside the helper)."""
    rule = next(r for r in ALL_RULES if r.code == "DDP011")
    findings = check_source(SEED_THROUGH_PARAMETER, rules=[rule]).findings
    assert [(f.code, f.line) for f in findings] == [("DDP011", 17)]


SEEDING_MAIN = """\
import torch
import torch.distributed as dist


def main(args):
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.1))
    train(model)


main(args)
"""


def test_a_main_that_seeds_among_other_work_is_no_seed_helper() -> None:
    """mattersim's ``main(args)`` seeds, then builds and trains: the finding is its seed call
    (line 7), not the ``main(args)`` call, which is no ``set_seed`` helper."""
    rule = next(r for r in ALL_RULES if r.code == "DDP011")
    findings = check_source(SEEDING_MAIN, rules=[rule]).findings
    assert [(f.code, f.line) for f in findings] == [("DDP011", 7)]


def test_plain_fixes_name_torch_distributed_as_the_file_does() -> None:
    """The rank-0 guard uses the file's own alias, or imports torch.distributed when it has none."""
    rule = [r for r in ALL_RULES if r.code == "DDP005"]
    aliased = "import torch\nimport torch.distributed as D\n\ntorch.save(model.state_dict(), 'm.pt')\n"
    fixed = check_source(aliased, rules=rule, fix=True).fixed
    assert fixed is not None and "if not D.is_initialized() or D.get_rank() == 0:\n    torch.save(" in fixed
    bare = "from torch import save\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\nmodel = DDP(model)\nsave(model.module.state_dict(), 'm.pt')\n"
    fixed = check_source(bare, rules=rule, fix=True).fixed
    assert fixed is not None and "import torch.distributed as dist\n" in fixed
    assert "if not dist.is_initialized() or dist.get_rank() == 0:\n    save(" in fixed
    compile(fixed, "fixed.py", "exec")


RANK_ZERO_FORWARD = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
{runtime}
dist.init_process_group("gloo")
model = DDP(Net())
for x in loader:
    model(x).sum().backward()
if dist.get_rank() == 0:
    {body}
"""


@pytest.mark.parametrize("runtime, inner", [("", "model.module"), ("import ddpify.runtime as ddpify\n", "ddpify.unwrap(model)")])
def test_rank_zero_training_forward_hangs_and_evaluation_is_not_reported(runtime: str, inner: str) -> None:
    """With gradients, DDP's forward arms an all-reduce nobody else joins: a hang, reported with
    the plain module as the file names it. Under no_grad it arms nothing (the buffer broadcast is
    answered by the other ranks' next step; only the last one is left, backend-dependent): silent."""
    rule = [r for r in ALL_RULES if r.code == "DDP027"]
    training = check_source(RANK_ZERO_FORWARD.format(runtime=runtime, body="model(x).sum().backward()"), rules=rule).findings
    assert len(training) == 1 and "the job hangs" in training[0].message and f"call {inner} here" in training[0].message
    evaluation = RANK_ZERO_FORWARD.format(runtime=runtime, body="with torch.no_grad():\n        print(model(x))")
    assert check_source(evaluation, rules=rule).findings == ()
