"""Issue 21: rules that know what the project's code and the script's shape say.

DDP011 knows which randomness the project's own code draws after a seed: a class picked by
task (``Exp = Exp_Forecast`` then ``exp = Exp(args)``, Large-Time-Series-Model) whose model has
dropout draws from torch's RNG, so the same ``torch.manual_seed(seed)`` on every rank is
reported; a picked class that draws nothing leaves it quiet. A same-file seed helper that does
nothing else is reported where it is called (TransReID's ``set_seed(cfg.SEED)``). A function a
notebook-style script never calls is dead code (the Annotated Transformer)."""

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


_NOTEBOOK = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def is_interactive_notebook():
    return __name__ == "__main__"


def example_toy_model():  # the notebook's call of it is commented out
    loader = DataLoader(data, sampler=DistributedSampler(data))
    for epoch in range(20):
        for batch in loader:
            print(batch)


def worker(rank):
    dist.init_process_group("nccl", rank=rank, world_size=2)


if is_interactive_notebook():
    mp.spawn(worker, nprocs=2)
"""


def test_an_uncalled_function_of_a_notebook_script_is_dead_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Annotated Transformer: a script nobody imports whose main block is spelled
    ``if is_interactive_notebook():`` (``__name__ == "__main__"``); a function it never calls
    runs nowhere, so its loop and print are no findings."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "notebook.py").write_text(_NOTEBOOK)
    monkeypatch.chdir(tmp_path)
    findings = check_source(_NOTEBOOK, "notebook.py", rules=select_rules(["DDP001", "DDP012"])).findings
    assert not findings, findings


_PROCESSOR = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def do_train(model, loader, local_rank):
    model = DistributedDataParallel(model, device_ids=[local_rank])
    for x in loader:
        model(x).sum().backward()


def do_inference(model, loader):
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    for x in loader:
        print(model(x).sum())
"""
_TRAIN = """\
import torch.distributed as dist

from processor import do_train

dist.init_process_group("nccl")
do_train(model, loader, local_rank){also}
"""
_TEST = """\
from processor import do_inference

do_inference(model, val_loader)
"""


@pytest.mark.parametrize(("also", "reported"), [("", False), ("\ndo_inference(model, val_loader)", True)], ids=["test-script-only", "training-too"])
def test_a_function_only_one_process_scripts_call_runs_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, also: str, reported: bool
) -> None:
    """TransReID's ``processor.do_inference``: only test.py, a script with no distributed code
    at all, calls it, so its print and its DataParallel are no DDP findings; once the
    distributed training script calls it too, they are."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "processor.py").write_text(_PROCESSOR)
    (tmp_path / "train.py").write_text(_TRAIN.format(also=also))
    (tmp_path / "test.py").write_text(_TEST)
    monkeypatch.chdir(tmp_path)
    found = {(f.code, f.line) for f in check_source(_PROCESSOR, "processor.py", rules=select_rules(["DDP012", "DDP024"])).findings}
    assert bool(found & {("DDP012", 16), ("DDP024", 14)}) is reported, found
