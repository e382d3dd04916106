"""Issue 21, DDP011 (the same seed on every rank), seeds set where the file does not spell
them out: a seeding helper that fills its seed in when none is given (``if seed is None: seed =
...``, rq-vae's ``set_seed``; slimmable's ``set_random_seed()`` called with no seed at all),
a library seeder taking ``seed=`` (MONAI's ``set_determinism``, whose seed its ``Rand*``
transforms take up), and a script that is data-parallel only through its project's helpers
(rq-vae's ``dist_utils.dataparallel_and_sync``). Not reported: the same helpers handed a seed
that names the rank, and a script that never trains data-parallel."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_RULES = select_rules(["DDP011"])

_LOCAL_HELPER = """\
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision import transforms

SEED = 7


def set_random_seed(seed=None):
    if seed is None:
        seed = {filled}
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def main():
    dist.init_process_group("nccl")
    {call}
    augment = transforms.RandomHorizontalFlip()
    model = DDP(torch.nn.Linear(4, 2))
"""


@pytest.mark.parametrize(
    ("filled", "call", "reported"),
    [
        ("SEED", "set_random_seed()", True),  # the filled-in default, alike everywhere
        ("SEED", "set_random_seed(SEED)", True),
        ("SEED", "set_random_seed(SEED + dist.get_rank())", False),
        ("SEED + dist.get_rank()", "set_random_seed()", False),  # filled in per rank
    ],
)
def test_a_helper_filling_its_seed_in(filled: str, call: str, reported: bool) -> None:
    source = _LOCAL_HELPER.format(filled=filled, call=call)
    lines = [f.line for f in check_source(source, "train.py", rules=_RULES).findings]
    assert lines == ([22] if reported else []), lines


_MONAI = """\
import torch
import torch.distributed as dist
from monai.transforms import Compose, RandFlipd, RandSpatialCropd
from monai.utils import set_determinism
from torch.nn.parallel import DistributedDataParallel


def main(args):
    dist.init_process_group("nccl")
    set_determinism(seed={seed})
    train_transform = Compose([RandSpatialCropd(keys="image", roi_size=[64, 64]), RandFlipd(keys="image", prob=0.5)])
    model = DistributedDataParallel(torch.nn.Linear(4, 2))
"""


@pytest.mark.parametrize(("seed", "reported"), [("args.seed", True), ("args.seed + dist.get_rank()", False)])
def test_monai_set_determinism(seed: str, reported: bool) -> None:
    findings = check_source(_MONAI.format(seed=seed), "brats.py", rules=_RULES).findings
    assert [f.line for f in findings] == ([10] if reported else [])


_UTILS = """\
import random

import numpy as np
import torch


def set_seed(seed=None):
    if seed is None:
        seed = random.getrandbits(32)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return seed
"""

_DIST_UTILS = """\
import torch
import torch.distributed as dist


def dataparallel_and_sync(distenv, model):
    if distenv.master:
        pass
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[distenv.local_rank])


def initialize(args):
    dist.init_process_group("nccl")
"""

_MAIN = """\
import torch
from torch.utils.data import DataLoader

import utils.dist as dist_utils
from utils.seeding import set_seed

set_seed({seed})

if __name__ == "__main__":
    dist_utils.initialize(args)
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=8)
    model = {model}
"""


@pytest.mark.parametrize(
    ("seed", "model", "reported"),
    [
        ("args.seed", "dist_utils.dataparallel_and_sync(distenv, torch.nn.Linear(4, 2))", True),
        ("args.seed", "torch.nn.Linear(4, 2)", True),  # dist_utils.initialize joins the group
        ("args.seed + distenv.world_rank", "torch.nn.Linear(4, 2)", False),
    ],
)
def test_data_parallel_through_project_helpers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: str, model: str, reported: bool
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "seeding.py").write_text(_UTILS)
    (tmp_path / "utils" / "dist.py").write_text(_DIST_UTILS)
    source = _MAIN.format(seed=seed, model=model)
    (tmp_path / "main.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    lines = [f.line for f in check_source(source, "main.py", rules=_RULES).findings]
    assert lines == ([7] if reported else []), lines


def test_not_data_parallel_without_such_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "seeding.py").write_text(_UTILS)
    (tmp_path / "utils" / "dist.py").write_text("import torch.distributed as dist\n\n\ndef initialize(args):\n    return dist.is_available()\n")
    source = _MAIN.format(seed="args.seed", model="torch.nn.Linear(4, 2)")
    (tmp_path / "main.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    assert not check_source(source, "main.py", rules=_RULES).findings
