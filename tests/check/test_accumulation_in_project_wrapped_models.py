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
