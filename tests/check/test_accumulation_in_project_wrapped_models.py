"""Issue 21: gradient accumulation in a trainer whose model a project helper wraps in DDP
(Pointcept's ``create_ddp_model``): DDP020 applies as to a literal ``DistributedDataParallel``;
a helper that does not wrap leaves the file without a DDP model, and DDP020 quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_HELPERS = """\
from torch.nn.parallel import DistributedDataParallel


def create_ddp_model(model, **kwargs):
    return DistributedDataParallel(model, **kwargs)


def create_plain_model(model, **kwargs):
    return model
"""

_TRAINER = """\
import torch.distributed as dist

from defaults import {helper}


class Trainer:
    def __init__(self, model, optimizer, cfg):
        self.model = {helper}(model)
        self.optimizer = optimizer
        self.cfg = cfg
        self.counter = 0

    def run_step(self, batch):
        loss = self.model(batch) / self.cfg.gradient_accumulation_steps
        loss.backward()
        self.counter += 1
        if self.counter >= self.cfg.gradient_accumulation_steps:
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.counter = 0
"""


@pytest.mark.parametrize(("helper", "reported"), [("create_ddp_model", True), ("create_plain_model", False)])
def test_accumulation_with_a_model_a_project_helper_wraps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: str, reported: bool
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "defaults.py").write_text(_HELPERS)
    text = _TRAINER.format(helper=helper)
    (tmp_path / "train.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    codes = [f.code for f in check_source(text, "train.py", rules=select_rules(["DDP020"])).findings]
    assert ("DDP020" in codes) is reported, codes


_LOOP = """\
def train(net, optimizer, loader, gradient_accumulate_steps):
    for step, (x, y) in enumerate(loader):
        loss = net(x, y) / gradient_accumulate_steps
        loss.backward()
        if (step + 1) % gradient_accumulate_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
"""

_ENTRY = """\
import torch
{wrap_import}
from common.trainer import train


def main(args):
    net = torch.nn.Linear(4, 2)
    {wrap}
    train(net, torch.optim.SGD(net.parameters(), lr=0.1), loader, args.accum)
"""


@pytest.mark.parametrize(
    ("wrap_import", "wrap", "reported"),
    [
        ("from torch.nn.parallel import DistributedDataParallel as DDP", "net = DDP(net)", True),
        ("import torch.nn.parallel", "net = torch.nn.parallel.DistributedDataParallel(net)", True),
        ("", "net = net.cuda()", False),
    ],
)
def test_accumulation_in_a_trainer_module_a_ddp_script_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wrap_import: str, wrap: str, reported: bool
) -> None:
    """VL-BERT's common/trainer.py: the loop accumulates, the entry script that imports it wraps
    the model it hands in; with no DDP in the importers the loop is single-process code."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "trainer.py").write_text(_LOOP)
    (tmp_path / "train_entry.py").write_text(_ENTRY.format(wrap_import=wrap_import, wrap=wrap))
    monkeypatch.chdir(tmp_path)
    codes = [f.code for f in check_source(_LOOP, "common/trainer.py", rules=select_rules(["DDP020"])).findings]
    assert ("DDP020" in codes) is reported, codes
