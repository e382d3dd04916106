"""Issue 21: the project's modules under a source root. HRNet-style repositories run
``tools/train.py``, whose ``import _init_paths`` puts ``lib/`` on ``sys.path``, so ``from dataset
import make_dataloader`` is ``lib/dataset``; a ``src/`` layout installs ``src/<package>``. The
loader such a helper builds with a DistributedSampler needs set_epoch in the script's epoch
loop (DDP001), found also without a repository marker when the check runs from the root."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_BUILD = """\
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def make_dataloader(dataset, distributed=False):
    sampler = DistributedSampler(dataset) if distributed else None
    return DataLoader(dataset, batch_size=8, shuffle=sampler is None, sampler=sampler)
"""

_SCRIPT = """\
import torch
import torch.distributed as dist

import _init_paths
from {module} import make_dataloader
from trainer import do_train


def main(args):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    train_loader = make_dataloader(list(range(64)), distributed=True)
    for epoch in range(args.epochs):
        do_train(model, train_loader, epoch)


if __name__ == "__main__":
    main(None)
"""


@pytest.mark.parametrize(
    ("root", "package", "marker"),
    [("lib", "dataset", None), ("src", "mydata", "pyproject.toml"), ("lib", "dataset", "setup.py")],
)
def test_a_loader_built_under_a_source_root_needs_set_epoch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str, package: str, marker: str | None
) -> None:
    (tmp_path / root / package).mkdir(parents=True)
    (tmp_path / root / package / "__init__.py").write_text("from .build import make_dataloader\n", encoding="utf-8")
    (tmp_path / root / package / "build.py").write_text(_BUILD, encoding="utf-8")
    (tmp_path / "tools").mkdir()
    if marker is not None:
        (tmp_path / marker).touch()
    script = tmp_path / "tools" / "train.py"
    source = _SCRIPT.format(module=package)
    script.write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    found = {(f.code, f.line) for f in check_source(source, str(script), rules=select_rules(["DDP001"])).findings}
    assert found == {("DDP001", 13)}


def test_a_module_that_is_not_there_is_no_project_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tools").mkdir()
    script = tmp_path / "tools" / "train.py"
    source = _SCRIPT.format(module="dataset")
    script.write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert not check_source(source, str(script), rules=select_rules(["DDP001"])).findings
