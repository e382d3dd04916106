"""A rank flag a base class sets on ``self`` in another file of the project (VL-T5's
``self.verbose``, False on every rank but 0) is a rank test in its subclasses: their prints
under ``if self.verbose:`` run on rank 0, and so does the base class's ``save`` that only
guarded subclass code calls. ``wandb.save(...)`` in those files calls no method of the
project."""

from __future__ import annotations

from pathlib import Path

import pytest

import libcst as cst

from ddpify.analysis import Analysis, importer_analysis
from ddpify.check.engine import check_source, select_rules
from ddpify.tree.metadata import FastMetadata

_BASE = """\
import torch
import torch.distributed as dist


class TrainerBase:
    def __init__(self, args, model):
        self.args = args
        self.model = model
        self.verbose = True
        if args.distributed:
            if dist.get_rank() != 0:
                self.verbose = False

    def save(self, name):
        torch.save(self.model.state_dict(), f"{self.args.output}/{name}.pth")
"""
_TASK = """\
import torch
import torch.distributed as dist
import wandb
from trainer_base import TrainerBase


class Trainer(TrainerBase):
    def train(self, loader):
        for epoch in range(self.args.epochs):
            for batch in loader:
                self.model(batch).sum().backward()
            {guard}
                print("epoch", epoch)
                self.save("LAST")
        wandb.save("code/*.py")


def main(args):
    dist.init_process_group("nccl")
    Trainer(args, model).train(loader)
"""


@pytest.mark.parametrize(("guard", "reported"), [("if self.verbose:", False), ("if self.args.log:", True)])
def test_a_flag_the_base_class_sets(tmp_path: Path, guard: str, reported: bool) -> None:
    (tmp_path / "trainer_base.py").write_text(_BASE, encoding="utf-8")
    task = tmp_path / "task.py"
    task.write_text(_TASK.format(guard=guard), encoding="utf-8")
    rules = select_rules(["DDP005", "DDP012"])
    prints = check_source(task.read_text(encoding="utf-8"), str(task), rules=rules).findings
    assert bool([f for f in prints if f.code == "DDP012"]) is reported
    base = tmp_path / "trainer_base.py"
    saves = check_source(base.read_text(encoding="utf-8"), str(base), rules=rules).findings
    assert bool([f for f in saves if f.code == "DDP005"]) is reported


def test_an_importer_is_read_with_its_imports_and_never_with_its_own_importers(tmp_path: Path) -> None:
    """Where a checked file's methods are called is read in the files that import it, each with
    its own imports (an inherited flag) but never with its own importers: a chain of importers
    each reading theirs recursed on nerfstudio."""
    (tmp_path / "trainer_base.py").write_text(_BASE, encoding="utf-8")
    (tmp_path / "task.py").write_text(_TASK.format(guard="if self.verbose:"), encoding="utf-8")
    (tmp_path / "run.py").write_text("import dist_tools\nfrom task import Trainer\n\nif dist_tools.is_main():\n    Trainer(args, model).train(loader)\n", encoding="utf-8")
    task = tmp_path / "task.py"
    importer = importer_analysis(task, task.stat().st_mtime_ns, 1)
    assert importer is not None
    assert importer.rank_tests.flag(cst.parse_expression("self.verbose")) is not None  # its import read
    assert importer.source.project.called_elsewhere("train") is None  # run.py not read
    checked = Analysis(FastMetadata(cst.parse_module(task.read_text(encoding="utf-8"))), str(task))
    assert checked.source.project.called_elsewhere("train") is not None
