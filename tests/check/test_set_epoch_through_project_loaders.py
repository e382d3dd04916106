"""Issue 21: DDP001 finds the DistributedSampler loaders that reach an epoch loop the way real
projects build them (ddp21j split A: pytorch_image_classification, diffwave):

- a loader whose ``batch_sampler=`` is a ``BatchSampler`` over a DistributedSampler;
- one a helper returns through two package ``__init__.py`` re-exports (they cost no depth);
- an epoch loop spelt ``for epoch, seed in enumerate(epoch_seeds):`` around a train() call;
- a loader handed to a learner class and read back as ``self.dataset`` in ``while True``.

The fix for a loader the file cannot see into advances the sampler inside its batch sampler too;
a batch loop whose index is named ``epoch`` is no epoch loop."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ddpify.check.engine import check_source, select_rules

_HEAD = """\
import torch
import torch.distributed as dist
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(net)
"""


def _check(text: str, path: Path | None = None) -> list[tuple[int, str]]:
    result = check_source(text, str(path) if path else "<string>", rules=select_rules(["DDP001"]))
    return [(f.line, f.code) for f in result.findings]


def _fixed(text: str, path: Path | None = None) -> str:
    result = check_source(text, str(path) if path else "<string>", rules=select_rules(["DDP001"]), fix=True)
    return result.fixed or text


@pytest.mark.parametrize(
    "build",
    [
        "sampler = DistributedSampler(train_set)\nloader = DataLoader(train_set, batch_sampler=BatchSampler(sampler, 8, drop_last=True))",
        "batches = BatchSampler(DistributedSampler(train_set), batch_size=8, drop_last=False)\nloader = DataLoader(train_set, batch_sampler=batches)",
        "loader = DataLoader(train_set, batch_sampler=BatchSampler(sampler=DistributedSampler(train_set), batch_size=8, drop_last=True))",
    ],
)
def test_a_batch_sampler_over_a_distributed_sampler(build: str) -> None:
    text = _HEAD + build + "\nfor epoch in range(3):\n    for x, y in loader:\n        model(x).sum().backward()\n"
    assert [code for _, code in _check(text)] == ["DDP001"]
    fixed = _fixed(text)
    cst.parse_module(fixed)
    assert "set_epoch(epoch)" in fixed


_LOADER_MODULE = """\
import torch.distributed as dist
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler


def create_dataloader(train_set, val_set):
    if dist.is_initialized():
        train_sampler = DistributedSampler(train_set)
    else:
        train_sampler = RandomSampler(train_set)
    batches = BatchSampler(train_sampler, batch_size=8, drop_last=True)
    return DataLoader(train_set, batch_sampler=batches), DataLoader(val_set, batch_size=8)
"""

_TRAIN = """\
import numpy as np
import torch
import torch.distributed as dist

from project import create_dataloader


def train(epoch, model, loader):
    for x, y in loader:
        model(x).sum().backward()


def main():
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(net)
    train_loader, val_loader = create_dataloader(train_set, val_set)
    for epoch, seed in enumerate(epoch_seeds):
        np.random.seed(seed)
        train(epoch, model, train_loader)
"""


def test_a_helper_re_exported_by_two_packages_and_an_enumerated_epoch_loop(tmp_path: Path) -> None:
    (tmp_path / "setup.py").touch()
    package = tmp_path / "project"
    (package / "datasets").mkdir(parents=True)
    (package / "__init__.py").write_text("from .datasets import create_dataloader\n")
    (package / "datasets" / "__init__.py").write_text("from .dataloader import create_dataloader\n")
    (package / "datasets" / "dataloader.py").write_text(_LOADER_MODULE)
    script = tmp_path / "train.py"
    script.write_text(_TRAIN)
    assert _check(_TRAIN, script) == [(17, "DDP001")]
    fixed = _fixed(_TRAIN, script)
    assert 'for epoch_sampler in (train_loader.sampler, getattr(train_loader.batch_sampler, "sampler", None)):' in fixed
    assert "epoch_sampler.set_epoch(epoch)" in fixed and "set_epoch(epoch, seed)" not in fixed


_LEARNER = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def from_path(dataset, is_distributed=False):
    return DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset) if is_distributed else None)


class Learner:
    def __init__(self, model, dataset):
        self.model = model
        self.dataset = dataset

    def train(self, max_steps):
        step = 0
        while True:
            for features in self.dataset:
                if step >= max_steps:
                    return
                self.model(features).sum().backward()
                step += 1


def train_distributed(rank, world, dataset):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = torch.nn.parallel.DistributedDataParallel(net)
    Learner(model, from_path(dataset, is_distributed=True)).train(1000)
"""


def test_a_loader_handed_to_a_class_and_read_as_an_attribute() -> None:
    assert _check(_LEARNER) == [(17, "DDP001")]


def test_a_batch_loop_with_an_index_named_epoch_is_no_epoch_loop() -> None:
    text = _HEAD + "loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))\n"
    text += "for epoch, (x, y) in enumerate(loader):\n    model(x).sum().backward()\n"
    assert _check(text) == []
