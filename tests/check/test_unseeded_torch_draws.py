"""Issue 21 (ddp21j split A, diffwave's learner.py): nothing in the project seeds torch, and each
spawned worker's training step draws its diffusion timesteps and noise from torch's default
generator. That generator starts from one fixed seed in every process, so every rank draws the
same numbers at every step: DDP011 reports the step's first draw. A seed anywhere in the project
(a sibling module's ``set_seed``, the entry script's ``torch.manual_seed``) may reach the workers,
so the draw is then not reported (the files that run with it: those it imports, and those that
import it up to the entry script); draws outside a training step (set-up data, an evaluation
without ``backward()``) are the same on every rank on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_LEARNER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Learner:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
        self.optimizer = torch.optim.Adam(model.parameters())
        self.fixed = torch.randn(4, 16)  # set-up: the same on every rank is right

    def train_step(self, audio):
        t = torch.randint(0, 50, [audio.shape[0]], device=audio.device)
        noise = torch.randn_like(audio)
        loss = (self.model(audio + noise, t) - noise).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def sample(self):
        with torch.no_grad():
            return self.model(torch.randn(1, 16), torch.zeros(1))


def train_distributed(replica_id, replica_count, model, loader):
    dist.init_process_group("gloo", rank=replica_id, world_size=replica_count)
    learner = Learner(DistributedDataParallel(model), loader)
    while True:
        for audio in learner.loader:
            learner.train_step(audio)
"""

_MAIN = """\
from torch.multiprocessing import spawn

from learner import train_distributed

if __name__ == "__main__":
    {seed}spawn(train_distributed, args=(2, build_model(), build_loader()), nprocs=2)
"""


_UTILS = "import torch\n\n\ndef fix_seeds(s):\n    torch.cuda.manual_seed_all(s)\n"


def _lines(tmp_path: Path, main: str, extra: dict[str, str] | None = None) -> list[int]:
    (tmp_path / "setup.py").touch()
    (tmp_path / "__main__.py").write_text(main)
    for name, text in (extra or {}).items():
        (tmp_path / name).write_text(text)
    script = tmp_path / "learner.py"
    script.write_text(_LEARNER)
    findings = check_source(_LEARNER, str(script), rules=select_rules(["DDP011"])).findings
    return sorted(f.line for f in findings)


def test_a_training_step_drawing_from_unseeded_torch_is_reported_once(tmp_path: Path) -> None:
    assert _lines(tmp_path, _MAIN.format(seed="")) == [13]


@pytest.mark.parametrize(
    ("main", "extra"),
    [
        (_MAIN.format(seed="torch.manual_seed(0)\n    "), None),  # DDP034's finding, not this one
        (_MAIN.format(seed="utils.set_seed(1)\n    "), None),
        (_MAIN.format(seed="from utils import fix_seeds\n    fix_seeds(3)\n    "), {"utils.py": _UTILS}),
    ],
)
def test_a_seed_in_the_files_that_run_with_it_is_trusted(tmp_path: Path, main: str, extra: dict[str, str] | None) -> None:
    assert _lines(tmp_path, main, extra) == []


def test_a_seeding_helper_nothing_imports_seeds_nothing(tmp_path: Path) -> None:
    assert _lines(tmp_path, _MAIN.format(seed=""), {"utils.py": _UTILS}) == [13]


def test_python_and_numpy_seeds_do_not_seed_torch(tmp_path: Path) -> None:
    main = _MAIN.format(seed="random.seed(0)\n    np.random.seed(0)\n    ")
    assert _lines(tmp_path, main) == [13]


_WORKERS = """\
import random

import torch
import torch.distributed as dist


class Clips(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n{init_draw}

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        start = {crop}  # a random crop offset, drawn in the worker
        return torch.arange(start, start + 4).float()


def main():
    dist.init_process_group("gloo")
    g = torch.Generator()
    g.manual_seed(0)  # the sampler's own generator: it seeds nothing else
    sampler = torch.utils.data.DistributedSampler(Clips(64))
    {name} = torch.utils.data.DataLoader(Clips(64), batch_size=8, sampler=sampler, num_workers=4{extra})
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
    for x in {name}:
        model(x).sum().backward()
"""


@pytest.mark.parametrize(
    ("name", "extra", "crop", "init_draw", "found"),
    [
        ("train_loader", "", "random.randint(0, 8)", "", [24]),  # ddp21k split A, voxceleb_trainer
        ("train_loader", ", generator=g", "random.randint(0, 8)", "", []),  # seeds its workers from its own generator
        ("train_loader", "", "0", "\n        self.offsets = torch.randperm(n)", []),  # drawn once, in the main process
    ],
)
def test_loader_workers_seeded_from_unseeded_torch(tmp_path: Path, name: str, extra: str, crop: str, init_draw: str, found: list[int]) -> None:
    """Every DataLoader seeds its workers from torch's default generator: where nothing seeds
    torch, worker k of every rank gets the same seed, and the dataset's random crops repeat on
    every rank."""
    (tmp_path / "setup.py").touch()
    text = _WORKERS.format(name=name, extra=extra, crop=crop, init_draw=init_draw)
    script = tmp_path / "train.py"
    script.write_text(text)
    assert [f.line for f in check_source(text, str(script), rules=select_rules(["DDP011"])).findings] == found
