"""Issue 21: checkpoints saved and resumed through the wrapper on purpose (ddp21j split A, PAWS's
paws_train.py). The encoder is wrapped when ``world_size > 1``; rank 0 saves
``{"encoder": encoder.state_dict()}`` and the script's own resume loads that entry back into the
same wrapped encoder: DDP008 does not report the resume (saved and loaded through one wrap). The
project's fine-tuning script reads the entry and drops the ``module.`` prefix: the repository's
convention, so DDP007 does not report the save either. Without such a reader, or with one that
strips another entry, the save is still reported. Other spellings of the convention: a reader that
strips the prefix a line after reading the entry, cuts its seven characters (``k[7:]``), or loads
the entry into a model it wrapped first; one that wraps only after loading expects plain keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_TRAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def load_checkpoint(r_path, encoder, opt):
    checkpoint = torch.load(r_path, map_location="cpu")
    encoder.load_state_dict(checkpoint["encoder"])
    opt.load_state_dict(checkpoint["opt"])
    return encoder, opt, checkpoint["epoch"]


def main(rank, world_size, load_model):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    encoder = init_model()
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    if world_size > 1:
        encoder = DistributedDataParallel(encoder)
    start_epoch = 0
    if load_model:
        encoder, optimizer, start_epoch = load_checkpoint("latest.pth.tar", encoder=encoder, opt=optimizer)
    for epoch in range(start_epoch, 10):
        train_one_epoch(encoder, optimizer)
        if rank == 0:
            torch.save({"encoder": encoder.state_dict(), "opt": optimizer.state_dict(), "epoch": epoch + 1}, "latest.pth.tar")
"""

_FINE_TUNE = """\
import torch


def load_pretrained(encoder, path):
    checkpoint = torch.load(path, map_location="cpu")
    pretrained_dict = {{k.replace('module.', ''): v for k, v in checkpoint['{entry}'].items()}}
    encoder.load_state_dict(pretrained_dict)
"""


def _codes(tmp_path: Path, fine_tune: str | None) -> list[str]:
    (tmp_path / "setup.py").touch()
    (tmp_path / "src").mkdir()
    if fine_tune is not None:
        (tmp_path / "src" / "fine_tune.py").write_text(fine_tune)
    script = tmp_path / "src" / "paws_train.py"
    script.write_text(_TRAIN)
    return sorted(f.code for f in check_source(_TRAIN, str(script), rules=select_rules(["DDP007", "DDP008"])).findings)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("encoder", []),  # the project's reader strips this entry: the wrapper's keys are its convention
        ("model", ["DDP007"]),  # it strips another entry: nothing says this one is read that way
    ],
)
def test_a_reader_elsewhere_that_strips_the_entry(tmp_path: Path, entry: str, expected: list[str]) -> None:
    assert _codes(tmp_path, _FINE_TUNE.format(entry=entry)) == expected


def test_without_a_reader_elsewhere_only_the_save_is_reported(tmp_path: Path) -> None:
    assert _codes(tmp_path, None) == ["DDP007"]


_SAVES = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(build_model().cuda(), device_ids=[dist.get_rank()])
for epoch in range(10):
    train_one_epoch(model)
    if dist.get_rank() == 0:
        torch.save({"state_dict": model.state_dict(), "epoch": epoch}, "checkpoint.pth")
"""
_READERS = {
    "strips a line after the read": (
        "def load_checkpoint(model, path):\n    state = torch.load(path, map_location='cpu')['state_dict']\n"
        "    state = {k.replace('module.', ''): v for k, v in state.items()}\n    model.load_state_dict(state)\n"
    ),
    "cuts seven characters": "state = {k[7:]: v for k, v in torch.load('checkpoint.pth', map_location='cpu')['state_dict'].items()}\n",
    "loads into a wrapped model": "model = nn.DataParallel(build_model())\nmodel.load_state_dict(torch.load('checkpoint.pth')['state_dict'])\n",
}


@pytest.mark.parametrize("reader", _READERS.values(), ids=_READERS.keys())
def test_readers_elsewhere_that_expect_the_prefix(tmp_path: Path, reader: str) -> None:
    (tmp_path / "setup.py").touch()
    (tmp_path / "evaluate.py").write_text("import torch\nimport torch.nn as nn\n\n\n" + reader)
    script = tmp_path / "train.py"
    script.write_text(_SAVES)
    assert not check_source(_SAVES, str(script), rules=select_rules(["DDP007"])).findings


def test_a_reader_that_wraps_only_after_loading_expects_plain_keys(tmp_path: Path) -> None:
    (tmp_path / "setup.py").touch()
    reader = "def main():\n    model = build_model()\n    model.load_state_dict(torch.load('checkpoint.pth')['state_dict'])\n    model = DDP(model)\n"
    (tmp_path / "finetune.py").write_text("import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n" + reader)
    script = tmp_path / "train.py"
    script.write_text(_SAVES)
    assert [f.code for f in check_source(_SAVES, str(script), rules=select_rules(["DDP007"])).findings] == ["DDP007"]
