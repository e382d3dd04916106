"""Issue 21: a module that does not join the process group itself, run by a launcher of its
project that can only run on one node (DBNet's ``tools/train.py``: ``init_process_group(...,
world_size=torch.cuda.device_count(), rank=args.local_rank)``). There the local rank is the
global one, so a guard on it (``config['local_rank'] == 0``) is no multi-node bug (DDP006).
The launcher is found through the files that import the module, also through packages'
``__init__.py`` and imports made inside a function; one multi-node launcher keeps the finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_BASE = """\
import torch
from torch.utils.tensorboard import SummaryWriter


class BaseTrainer:
    def __init__(self, config, model):
        self.config = config
        self.model = torch.nn.parallel.DistributedDataParallel(model)
        if config["local_rank"] == 0:
            self.writer = SummaryWriter("runs")
"""

_SINGLE = """\
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    torch.distributed.init_process_group("nccl", init_method="env://", world_size=torch.cuda.device_count(), rank=args.local_rank)
    from trainer import Trainer

    Trainer({"local_rank": args.local_rank}, torch.nn.Linear(2, 2))


if __name__ == "__main__":
    main()
"""

_MULTI = """\
import os

import torch

from trainer import Trainer

torch.distributed.init_process_group("nccl", init_method="env://")
Trainer({"local_rank": int(os.environ["LOCAL_RANK"])}, torch.nn.Linear(2, 2))
"""


def _project(root: Path, launchers: list[str], packaged: bool) -> Path:
    (root / "setup.py").touch()
    (root / "base").mkdir()
    (root / "base" / "__init__.py").write_text("from .base_trainer import BaseTrainer\n")
    (root / "base" / "base_trainer.py").write_text(_BASE)
    trainer = "from base import BaseTrainer\n\n\nclass Trainer(BaseTrainer):\n    pass\n"
    if packaged:
        (root / "trainer").mkdir()
        (root / "trainer" / "__init__.py").write_text("from .trainer import Trainer\n")
        (root / "trainer" / "trainer.py").write_text(trainer)
    else:
        (root / "trainer.py").write_text(trainer)
    (root / "tools").mkdir()
    for index, launcher in enumerate(launchers):
        (root / "tools" / f"train{index}.py").write_text(launcher)
    return root / "base" / "base_trainer.py"


@pytest.mark.parametrize("packaged", [True, False])
@pytest.mark.parametrize(("launchers", "reported"), [([_SINGLE], False), ([_MULTI], True), ([_SINGLE, _MULTI], True), ([], True)])
def test_a_local_rank_guard_under_a_single_node_launcher_is_no_finding(
    tmp_path: Path, launchers: list[str], reported: bool, packaged: bool
) -> None:
    checked = _project(tmp_path, launchers, packaged)
    source = checked.read_text()
    found = {f.code for f in check_source(source, str(checked), rules=select_rules(["DDP006"])).findings}
    assert ("DDP006" in found) is reported
