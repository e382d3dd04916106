"""Issue 21: a rank flag that a project helper sets on the object it is handed. HybrIK's
``init_dist(opt)`` dispatches to a launcher function that ends with ``opt.log = True`` on local
rank 0 and ``opt.log = False`` elsewhere; the training script then saves and prints under ``if
opt.log:`` without ever assigning it. Other spellings: the flag assigned a rank test directly,
set on a later parameter, set by a helper the helper calls; a flag that is no rank test (the
user's ``--verbose``) keeps the findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_HELPERS = """\
import os

import torch.distributed as dist


def _init_pytorch(opt):
    dist.init_process_group(backend="nccl", init_method="env://")
    opt.rank = dist.get_rank()
    if opt.rank % opt.ngpus_per_node == 0:
        opt.log = True
    else:
        opt.log = False


def _init_slurm(opt):
    dist.init_process_group(backend="nccl", rank=int(os.environ["SLURM_PROCID"]))
    if dist.get_rank() == 0:
        opt.log = True
    else:
        opt.log = False


def init_dist(opt):
    if opt.launcher == "pytorch":
        _init_pytorch(opt)
    else:
        _init_slurm(opt)


def setup(config, args):
    dist.init_process_group("nccl")
    args.is_chief = dist.get_rank() == 0
    args.log = args.verbose


def setup_through(args):
    setup(None, args)
"""

_SCRIPT = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.env import init_dist, setup, setup_through


def main(opt):
    {setup}
    model = DDP(torch.nn.Linear(2, 2))
    if opt.{flag}:
        print("epoch done")
        torch.save(model.module.state_dict(), "model.pt")


if __name__ == "__main__":
    main(None)
"""


@pytest.mark.parametrize(
    ("setup", "flag", "restricted"),
    [
        ("init_dist(opt)", "log", True),
        ("setup({}, opt)", "is_chief", True),
        ("setup_through(opt)", "is_chief", True),
        ("setup({}, opt)", "log", False),  # the user's --verbose: no rank test
        ("init_dist(cfg)", "log", False),  # set on another object
    ],
)
def test_a_flag_set_by_a_project_helper_is_a_rank_test(tmp_path: Path, setup: str, flag: str, restricted: bool) -> None:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").touch()
    (tmp_path / "utils" / "env.py").write_text(_HELPERS, encoding="utf-8")
    (tmp_path / "setup.py").touch()
    script = tmp_path / "train.py"
    source = _SCRIPT.format(setup=setup, flag=flag)
    script.write_text(source, encoding="utf-8")
    found = {(f.code, f.line) for f in check_source(source, str(script), rules=select_rules(["DDP005", "DDP012"])).findings}
    assert (("DDP012", 11) in found) is not restricted
    assert (("DDP005", 12) in found) is not restricted


def test_a_flag_local_on_one_launcher_and_global_on_another_is_no_local_rank_guard(tmp_path: Path) -> None:
    """``opt.log`` is local rank 0 under one launcher and global rank 0 under the other: the
    save is not "once per node" for sure, so DDP006 stays quiet; the same save under
    ``opt.local_rank == 0`` is reported."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").touch()
    (tmp_path / "utils" / "env.py").write_text(_HELPERS, encoding="utf-8")
    (tmp_path / "setup.py").touch()
    script = tmp_path / "train.py"
    for flag, reported in (("log", False), ("local_rank == 0", True)):
        source = _SCRIPT.format(setup="init_dist(opt)", flag=flag)
        script.write_text(source, encoding="utf-8")
        found = {f.code for f in check_source(source, str(script), rules=select_rules(["DDP006"])).findings}
        assert ("DDP006" in found) is reported
