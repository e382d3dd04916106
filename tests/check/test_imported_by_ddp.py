"""Issue 21: a project module that never names torch.distributed itself but is imported by a
distributed script (a trainer class, a checkpoint helper: TorchSSL's ``models/fixmatch``) runs
in every rank's process, so the rules check it; the same module imported only by a
single-process script is not a DDP file. Up to three imports up (a package's ``__init__.py``
counts as one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source

_TRAINER = """\
import torch


class Trainer:
    def __init__(self, model):
        self.model = model

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
"""

_DDP_MAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from {module} import Trainer

dist.init_process_group("gloo")
trainer = Trainer(DDP(torch.nn.Linear(2, 2)))
trainer.load("last.pt")
"""

_PLAIN_MAIN = """\
import torch

from {module} import Trainer

trainer = Trainer(torch.nn.Linear(2, 2))
trainer.load("last.pt")
"""


@pytest.mark.parametrize(
    ("layout", "main", "checked"),
    [
        ({"trainer.py": _TRAINER}, _DDP_MAIN.format(module="trainer"), True),
        ({"engine/__init__.py": "from .trainer import Trainer\n", "engine/trainer.py": _TRAINER}, _DDP_MAIN.format(module="engine"), True),
        ({"trainer.py": _TRAINER}, _PLAIN_MAIN.format(module="trainer"), False),
        ({"trainer.py": _TRAINER}, _PLAIN_MAIN.format(module="trainer") + "dist = torch.distributions.Normal(0, 1)\ndist.sample()\n", False),
    ],
    ids=["sibling", "through-a-package", "single-process-importer", "importer-with-a-distribution-named-dist"],
)
def test_a_module_imported_by_a_ddp_script_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: dict[str, str], main: str, checked: bool
) -> None:
    (tmp_path / ".git").mkdir()
    for name, text in layout.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "main.py").write_text(main)
    monkeypatch.chdir(tmp_path)
    target = next(name for name in layout if name.endswith("trainer.py"))
    codes = [f.code for f in check_source(_TRAINER, target).findings]
    assert ("DDP004" in codes) is checked, codes
