"""Issue 21 (ddp21m and ddp21n split A: VQ-Diffusion's and AVID-CMA's ``main_worker``): the
launching process seeds torch (DDP034's finding), the workers ``mp.spawn`` starts are fresh
interpreters that seed nothing, and they consume torch's RNG through the project's helpers
(a loader with workers, a model with dropout). Every worker starts from torch's fixed default
seed, so DDP011 reports the worker once, at its ``def``. A seed anywhere the workers run (their
own code, module-level code each worker re-runs, a project module seeding on import, a project
helper or class they call) keeps it quiet, and so do forked children (``mp.Process``), which
inherit the parent's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_DATA = """\
import torch


def build_loader(dataset, workers):
    return torch.utils.data.DataLoader(dataset, batch_size=8, num_workers=workers)


def build_model():
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
"""

_SEEDING = """\
import torch


def set_seed(cfg):
    torch.manual_seed(cfg.seed)
"""

_TRAIN = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

{imports}


def main_worker(rank, args):
    dist.init_process_group("gloo", rank=rank, world_size=2)
{worker}    loader = data.build_loader(args.dataset, 4)
    model = DistributedDataParallel(data.build_model())
    for x in loader:
        model(x).sum().backward()


def main(args):
    torch.manual_seed(args.seed)
    {start}


if __name__ == "__main__":
    main(parse())
"""

_SPAWN = "mp.spawn(main_worker, args=(args,), nprocs=2)"


def _findings(tmp_path: Path, imports: str = "import data", worker: str = "", start: str = _SPAWN, extra: dict[str, str] | None = None) -> list[tuple[int, str]]:
    (tmp_path / "setup.py").touch()
    for name, text in {"data.py": _DATA, **(extra or {})}.items():
        (tmp_path / name).write_text(text)
    text = _TRAIN.format(imports=imports, worker=worker, start=start)
    script = tmp_path / "train.py"
    script.write_text(text)
    return [(f.line, f.message) for f in check_source(text, str(script), rules=select_rules(["DDP011"])).findings]


def _lines(tmp_path: Path, **kwargs: str | dict[str, str]) -> list[int]:
    return [line for line, _ in _findings(tmp_path, **kwargs)]  # type: ignore[arg-type]


def test_workers_seeded_only_in_the_parent_are_reported_at_the_worker(tmp_path: Path) -> None:
    assert _lines(tmp_path) == [9]


def test_a_launch_helper_of_the_project_starts_the_workers(tmp_path: Path) -> None:
    """VQ-Diffusion's ``launch(main_worker, ...)``: the helper spawns a worker of its own
    module that joins the group, then runs the function it was handed."""
    launch = (
        "import torch.distributed as dist\nimport torch.multiprocessing as mp\n\n\n"
        "def launch(fn, n, args=()):\n    mp.spawn(worker, nprocs=n, args=(fn, args))\n\n\n"
        "def worker(rank, fn, args):\n    dist.init_process_group('gloo', rank=rank, world_size=2)\n    fn(rank, *args)\n"
    )
    text = _TRAIN.replace('    dist.init_process_group("gloo", rank=rank, world_size=2)\n', "").replace(
        "from torch.nn.parallel import DistributedDataParallel\n", ""
    ).replace("DistributedDataParallel(data.build_model())", "data.build_model()")
    (tmp_path / "setup.py").touch()
    (tmp_path / "data.py").write_text(_DATA)
    (tmp_path / "launching.py").write_text(launch)
    text = text.format(imports="import data\nfrom launching import launch", worker="", start="launch(main_worker, 2, args=(args,))")
    script = tmp_path / "train.py"
    script.write_text(text)
    assert [f.line for f in check_source(text, str(script), rules=select_rules(["DDP011"])).findings] == [9]


@pytest.mark.parametrize(
    ("imports", "worker", "extra"),
    [
        ("import data", "    torch.manual_seed(args.seed + rank)\n", None),  # the worker seeds
        ("import data\nfrom seeding import set_seed", "    set_seed(args)\n", {"seeding.py": _SEEDING}),  # through a helper
        ("import data\n\ntorch.manual_seed(0)", "", None),  # module level: each worker re-runs it (the same seed: another finding)
        ("import data\nimport seeded", "", {"seeded.py": "import torch\n\ntorch.manual_seed(3)\n"}),  # a module seeding on import
        ("import data\nfrom trainer import Trainer", "    Trainer(args)\n", {"trainer.py": "import torch\n\n\nclass Trainer:\n    def __init__(self, args):\n        self.reseed(args)\n\n    def reseed(self, args):\n        torch.cuda.manual_seed_all(args.seed)\n"}),
    ],
)
def test_a_seed_the_workers_run_is_trusted(tmp_path: Path, imports: str, worker: str, extra: dict[str, str] | None) -> None:
    assert not [m for _, m in _findings(tmp_path, imports=imports, worker=worker, extra=extra) if "never seed torch" in m]


def test_forked_children_inherit_the_parents_seed(tmp_path: Path) -> None:
    start = "for r in range(2):\n        mp.Process(target=main_worker, args=(r, args)).start()"
    assert _lines(tmp_path, start=start) == []


def test_workers_that_draw_nothing_from_torch_are_not_reported(tmp_path: Path) -> None:
    quiet = "import torch\n\n\ndef build_loader(dataset, workers):\n    return list(dataset)\n\n\ndef build_model():\n    return torch.nn.Linear(4, 4)\n"
    assert _lines(tmp_path, extra={"data.py": quiet}) == []


def test_a_worker_also_called_in_the_launching_process_says_so(tmp_path: Path) -> None:
    """CoCLR (ddp21k split A): ``mp.spawn(main_worker, ...)`` or, in the launcher's mode,
    ``main_worker(...)`` called after the parent's seed: the same numbers on every rank either way."""
    start = f"if args.spawn:\n        {_SPAWN}\n    else:\n        main_worker(args.rank, args)"
    found = _findings(tmp_path, start=start)
    assert [line for line, _ in found] == [9]
    assert "called directly (line 22)" in found[0][1]


def test_each_worker_is_judged_by_what_it_reaches(tmp_path: Path) -> None:
    """Review of 047e0a6: a second worker that only evaluates (no backward) is not reported,
    nor blamed for the first worker's dropout; a worker seeding itself does not hide another."""
    text = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

import data


def train_worker(rank, args):
    dist.init_process_group("gloo", rank=rank, world_size=2)
{seed}    model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)))
    for x in data.build_loader(args.dataset, 0):
        model(x).sum().backward()


def test_worker(rank, args):
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(rank)
    model = data.build_model().eval()
    with torch.no_grad():
        for x in args.dataset:
            model(x)


def eval_worker(rank, args):
    dist.init_process_group("gloo", rank=rank, world_size=2)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)).eval()
    with torch.no_grad():
        for x in args.dataset:
            model(x)


if __name__ == "__main__":
    mp.spawn(train_worker, args=(parse(),), nprocs=2)
    mp.spawn(test_worker, args=(parse(),), nprocs=2)
    mp.spawn(eval_worker, args=(parse(),), nprocs=2)
"""
    (tmp_path / "setup.py").touch()
    (tmp_path / "data.py").write_text(_DATA)
    script = tmp_path / "train.py"
    for seed, expected in (("", [9]), ("    torch.manual_seed(rank)\n", [])):
        source = text.format(seed=seed)
        script.write_text(source)
        assert [f.line for f in check_source(source, str(script), rules=select_rules(["DDP011"])).findings] == expected


@pytest.mark.parametrize(
    ("imports", "worker", "extra"),
    [
        ("import data\nfrom timm.utils import random_seed", "    random_seed(args.seed, rank)\n", None),  # an installed package's
        ("import data\nimport common", "", {"common.py": "import seeded\n", "seeded.py": "import torch\n\ntorch.manual_seed(3)\n"}),
    ],
)
def test_seeds_the_analysis_cannot_read_are_trusted(tmp_path: Path, imports: str, worker: str, extra: dict[str, str] | None) -> None:
    """Review of 047e0a6: a seed-named helper of an installed package may seed torch; a module
    seeding on import two imports away does."""
    assert not [m for _, m in _findings(tmp_path, imports=imports, worker=worker, extra=extra) if "never seed torch" in m]
