"""Issue 21: an evaluation function of an engine module accumulates metrics over a loader that
the training script, another file of the project, builds with a DistributedSampler and hands
in (unet-pytorch's ``fit_one_epoch(..., gen_val, ...)``, SAM-Med3D's and CMGAN's ``test()``):
each rank scores its own shard, and DDP014 reports the loop in the engine file, where the fix
goes. Spellings: a module attribute call, a name imported from the module, a keyword argument, a
method of a trainer class, a loader a helper of a third file returns, a function that also
trains on another loader. Not reported: the caller or the function reduces, the handed loader
has no DistributedSampler, or no file of the project calls the function."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_ENGINE = """\
import torch


def evaluate(model, loader):
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += y.numel()
    return correct / total
"""

_FIT = """\
import torch


def fit_one_epoch(model, optimizer, gen, gen_val, epoch):
    for x, y in gen:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    val_loss = 0
    with torch.no_grad():
        for x, y in gen_val:
            val_loss += torch.nn.functional.cross_entropy(model(x), y).item()
    print("val loss", val_loss / len(gen_val))
"""

_TRAINER = """\
import torch


class Trainer:
    def __init__(self, model):
        self.model = model

    def validate(self, loader):
        meter = AverageMeter()
        for x, y in loader:
            meter.update(self.model(x).sum().item(), x.size(0))
        return meter.avg
"""

_DATA = """\
from torch.utils.data import DataLoader, DistributedSampler


def build_loaders(train_set, val_set):
    train_loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
    val_loader = DataLoader(val_set, batch_size=8, sampler=DistributedSampler(val_set, shuffle=False))
    return train_loader, val_loader
"""

_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

{imports}

dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
val_loader = DataLoader(val_set, batch_size=8, {sampler})


def main():
    {body}


main()
"""

_SHARDED = "sampler=DistributedSampler(val_set, shuffle=False)"


def _check(tmp_path: Path, checked: str, text: str, script: str, **others: str) -> list[str]:
    (tmp_path / "setup.py").touch()
    for name, body in others.items():
        (tmp_path / f"{name}.py").write_text(body)
    (tmp_path / "train.py").write_text(script)
    path = tmp_path / f"{checked}.py"
    path.write_text(text)
    return [f.code for f in check_source(text, str(path), rules=select_rules(["DDP014"])).findings]


@pytest.mark.parametrize(
    ("imports", "body"),
    [
        ("import engine", "print(engine.evaluate(model, val_loader))"),
        ("from engine import evaluate", "acc = evaluate(model, val_loader)\n    print(acc)"),
        ("from engine import evaluate", "print(evaluate(model, loader=val_loader))"),
    ],
)
def test_an_engine_function_handed_a_sharded_loader_is_reported(tmp_path: Path, imports: str, body: str) -> None:
    script = _SCRIPT.format(imports=imports, sampler=_SHARDED, body=body)
    assert _check(tmp_path, "engine", _ENGINE, script) == ["DDP014"]


def test_a_function_that_trains_on_one_loader_and_scores_another(tmp_path: Path) -> None:
    script = _SCRIPT.format(
        imports="from utils_fit import fit_one_epoch",
        sampler=_SHARDED,
        body="for epoch in range(3):\n        fit_one_epoch(model, optimizer, train_loader, val_loader, epoch)",
    )
    assert _check(tmp_path, "utils_fit", _FIT, script) == ["DDP014"]


def test_a_trainer_method_handed_a_sharded_loader(tmp_path: Path) -> None:
    script = _SCRIPT.format(imports="from trainer import Trainer", sampler=_SHARDED, body="print(Trainer(model).validate(val_loader))")
    assert _check(tmp_path, "trainer", _TRAINER, script) == ["DDP014"]


def test_a_loader_a_helper_of_a_third_file_returns(tmp_path: Path) -> None:
    script = _SCRIPT.format(
        imports="import engine\nfrom data import build_loaders",
        sampler="shuffle=False",
        body="train_loader, val_loader = build_loaders(train_set, val_set)\n    print(engine.evaluate(model, val_loader))",
    )
    assert _check(tmp_path, "engine", _ENGINE, script, data=_DATA) == ["DDP014"]


@pytest.mark.parametrize(
    ("sampler", "body"),
    [
        # the caller sums the shard's score across ranks
        (_SHARDED, "acc = torch.tensor(engine.evaluate(model, val_loader))\n    dist.all_reduce(acc)\n    print(acc / dist.get_world_size())"),
        # ... through a helper named for it
        (_SHARDED, "print(reduce_tensor(torch.tensor(engine.evaluate(model, val_loader))))"),
        # every rank scores the whole validation set
        ("shuffle=False", "print(engine.evaluate(model, val_loader))"),
    ],
)
def test_not_reported_when_reduced_or_unsharded(tmp_path: Path, sampler: str, body: str) -> None:
    script = _SCRIPT.format(imports="import engine", sampler=sampler, body=body)
    assert _check(tmp_path, "engine", _ENGINE, script) == []


def test_not_reported_when_the_function_reduces_itself(tmp_path: Path) -> None:
    reduced = _ENGINE.replace("    return correct / total", "    counts = torch.tensor([correct, total])\n    torch.distributed.all_reduce(counts)\n    return counts[0] / counts[1]")
    script = _SCRIPT.format(imports="import engine", sampler=_SHARDED, body="print(engine.evaluate(model, val_loader))")
    assert _check(tmp_path, "engine", reduced, script) == []


def test_not_reported_when_the_function_hands_on_a_reducing_function(tmp_path: Path) -> None:
    """CvT's ``test()``: ``average = _meter_reduce if distributed else lambda m: m.avg``, a
    reduction of this file run without being called by name."""
    reduced = _ENGINE.replace(
        "    return correct / total",
        "    average = _sum_over_ranks if torch.distributed.is_initialized() else float\n    return average(correct) / average(total)",
    )
    reduced += "\n\ndef _sum_over_ranks(value):\n    t = torch.tensor([value])\n    torch.distributed.reduce(t, 0)\n    return t.item()\n"
    script = _SCRIPT.format(imports="import engine", sampler=_SHARDED, body="print(engine.evaluate(model, val_loader))")
    assert _check(tmp_path, "engine", reduced, script) == []


def test_not_reported_without_a_caller_in_the_project(tmp_path: Path) -> None:
    script = _SCRIPT.format(imports="import other", sampler=_SHARDED, body="print(other.evaluate(model, val_loader))")
    assert _check(tmp_path, "engine", _ENGINE, script) == []
