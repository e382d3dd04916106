"""Issue 21 (ddp21o retinanet-examples, a class of false DDP012s): ``train.py``'s
``train(..., verbose=True)`` prints only under ``if verbose:``, and the entry module that
imports it passes ``verbose=(rank == 0)``; the file itself never calls ``train``. The flag is
read from the importing files' calls (a keyword or a position, a module attribute or an
imported name, a method's flag too); it stays every rank's where an importer passes ``True`` or
a value it cannot tell, or where no file calls the function."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_TRAIN = """\
import torch
import torch.distributed as dist


def train(model, loader, iterations, verbose=True):
    dist.init_process_group("nccl")
    if verbose:
        print("Preparing dataset...")
    for x in loader:
        model(x).sum().backward()
    if verbose:
        print("done")


class Trainer:
    def fit(self, loader, log=False):
        for x in loader:
            if log:
                print(x)
"""


def _findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, main: str) -> list[int]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "odtk").mkdir()
    (tmp_path / "odtk" / "__init__.py").write_text("")
    (tmp_path / "odtk" / "train.py").write_text(_TRAIN)
    (tmp_path / "odtk" / "main.py").write_text(main)
    monkeypatch.chdir(tmp_path)
    return [f.line for f in check_source(_TRAIN, "odtk/train.py", rules=select_rules(["DDP012"])).findings]


_WORKER = """\
import torch.multiprocessing as mp
from . import train
from .train import Trainer


def worker(rank, args):
    {call}


def main(args):
    mp.spawn(worker, args=(args,), nprocs=2)
"""


@pytest.mark.parametrize(
    "call",
    [
        "train.train(model, loader, 10, verbose=(rank == 0))",
        "train.train(model, loader, 10, rank == 0)",
        "train.train(model, loader, 10, verbose=not rank)\n    trainer = Trainer()\n    trainer.fit(loader, log=rank == 0)",
    ],
)
def test_a_rank_flag_passed_by_the_importer_quiets_the_other_ranks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str) -> None:
    found = _findings(tmp_path, monkeypatch, _WORKER.format(call=call))
    assert 8 not in found and 12 not in found
    if "Trainer" in call:
        assert found == []


@pytest.mark.parametrize(
    "call",
    [
        "train.train(model, loader, 10)",
        "train.train(model, loader, 10, verbose=True)",
        "train.train(model, loader, 10, verbose=args.verbose)",
        # a call of the name whose receiver this reading cannot place (review of this change)
        "train.train(model, loader, 10, verbose=rank == 0)\n    Trainer().fit(loader, log=True)\n    get().train(verbose=True)",
    ],
)
def test_a_flag_every_rank_may_hold_keeps_the_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str) -> None:
    assert {8, 12} <= set(_findings(tmp_path, monkeypatch, _WORKER.format(call=call)))


def test_no_importer_calling_it_keeps_the_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert {8, 12} <= set(_findings(tmp_path, monkeypatch, "from . import train\n"))


def test_a_function_the_file_hands_over_takes_no_flag_from_importers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mp.spawn(train, args=(...))`` in the file itself sets its arguments there."""
    spawned = _TRAIN + "\n\nimport torch.multiprocessing as mp\nmp.spawn(train, args=(None, [], 3), nprocs=2)\n"
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "odtk").mkdir()
    (tmp_path / "odtk" / "__init__.py").write_text("")
    (tmp_path / "odtk" / "train.py").write_text(spawned)
    (tmp_path / "odtk" / "main.py").write_text(_WORKER.format(call="train.train(model, loader, 10, verbose=(rank == 0))"))
    monkeypatch.chdir(tmp_path)
    found = [f.line for f in check_source(spawned, "odtk/train.py", rules=select_rules(["DDP012"])).findings]
    assert {8, 12} <= set(found)
