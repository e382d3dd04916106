"""Issue 21: DDP011 knows which randomness the project's own code draws after a seed. A
class picked by task (``Exp = Exp_Forecast`` then ``exp = Exp(args)``, Large-Time-Series-Model)
whose model has dropout draws from torch's RNG: the same ``torch.manual_seed(seed)`` on every
rank is reported; a picked class that draws nothing leaves it quiet. A same-file seed helper
that does nothing else is reported where it is called (TransReID's ``set_seed(cfg.SEED)``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_EXPERIMENTS = """\
import torch


class ExpDropout:
    def __init__(self, args):
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))


class ExpPlain:
    def __init__(self, args):
        self.model = torch.nn.Linear(4, 4)
"""
_SCRIPT = """\
import torch
import torch.distributed as dist

from experiments import ExpDropout, ExpPlain

dist.init_process_group("nccl")
torch.manual_seed(args.seed)
if args.task == "a":
    Exp = {first}
else:
    Exp = {second}
exp = Exp(args)
"""


@pytest.mark.parametrize(
    ("first", "second", "reported"),
    [("ExpDropout", "ExpPlain", True), ("ExpPlain", "ExpPlain", False)],
    ids=["one-picked-class-draws", "none-draws"],
)
def test_a_class_picked_by_task_draws_after_the_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str, second: str, reported: bool
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "experiments.py").write_text(_EXPERIMENTS)
    text = _SCRIPT.format(first=first, second=second)
    (tmp_path / "run.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    lines = [f.line for f in check_source(text, "run.py", rules=select_rules(["DDP011"])).findings]
    assert lines == ([7] if reported else []), lines


_SEEDER = """\
import random

import numpy as np
import torch
import torch.distributed as dist


def set_seed(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = True


dist.init_process_group("nccl")
set_seed(cfg.SOLVER.SEED)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
"""


def test_a_seed_helper_of_the_file_is_reported_at_its_call() -> None:
    findings = check_source(_SEEDER, rules=select_rules(["DDP011"])).findings
    assert [(f.line, f.message.split(" gives")[0]) for f in findings] == [(16, "set_seed(cfg.SOLVER.SEED)")]
