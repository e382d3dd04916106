"""Training steps in the project's own modules (issue 20, class 1): the script builds the
models, the optimizers (itself or through a project helper) and the loader, and hands each
batch to a function or to a method of an object of a project class that runs backward and the
optimizer step. The batches train, so the loader is sharded; the models whose parameters reach
an optimizer are wrapped; a project helper that is read and writes nothing (its prints show on
rank 0 only) gets no "files it writes" item."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddpify.api import convert_source

_STEPS = """\
import torch.nn.functional as F


class Steps:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def eval_step(self, x, y):
        return F.mse_loss(self.model(x), y).item()


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def noisy_step(model, optimizer, x, y):
    loss = train_step(model, optimizer, x, y)
    print("loss", loss)
    with open("losses.txt", "a") as f:
        f.write(str(loss))
    return loss


def evaluate(model, batches):
    from tqdm import tqdm

    return sum(float(model(x).sum()) for x, _ in tqdm(batches))


def build_optimizers(model, other, lr):
    import torch

    return torch.optim.SGD(model.parameters(), lr=lr), torch.optim.SGD(other.parameters(), lr=lr)
"""

_HEAD = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

{imports}

data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
loader = DataLoader(data, batch_size=8, shuffle=True)
model = nn.Linear(4, 1)
"""

# (imports, the rest of the script): each hands the loader's batches to the project's training code
_SPELLINGS = {
    "instance method": (
        "from steps import Steps",
        """\
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        runner = Steps(model, optimizer)
        for epoch in range(2):
            for x, y in loader:
                runner.train_step(x, y)
        """,
    ),
    "module-qualified class": (
        "import steps as S",
        """\
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        runner = S.Steps(model, optimizer)
        for epoch in range(2):
            for x, y in loader:
                runner.train_step(x, y)
        """,
    ),
    "function": (
        "from steps import train_step",
        """\
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for x, y in loader:
                train_step(model, optimizer, x, y)
        """,
    ),
    "attribute of a runner class": (
        "from steps import Steps",
        """\
        class Runner:
            def __init__(self, model):
                self.steps = Steps(model, torch.optim.SGD(model.parameters(), lr=0.1))

            def fit(self, epochs):
                for epoch in range(epochs):
                    for x, y in loader:
                        self.steps.train_step(x, y)


        Runner(model).fit(2)
        """,
    ),
    "optimizers from a helper, stepped in the class": (
        "from steps import Steps, build_optimizers",
        """\
        other = nn.Linear(4, 1)
        optimizer, other_optimizer = build_optimizers(model, other, 0.1)
        model = nn.DataParallel(model)
        runner = Steps(model, optimizer)
        for epoch in range(2):
            for x, y in loader:
                runner.train_step(x, y)
        """,
    ),
}


def _convert(tmp_path: Path, imports: str, rest: str) -> tuple[str, list[str]]:
    (tmp_path / "steps.py").write_text(_STEPS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_HEAD.format(imports=imports) + textwrap.dedent(rest), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    return result.output, [f"L{m.line} {m.why}" for m in result.manual]


@pytest.mark.parametrize("spelling", sorted(_SPELLINGS))
def test_batches_handed_to_the_projects_training_step_are_sharded(tmp_path: Path, spelling: str) -> None:
    output, manual = _convert(tmp_path, *_SPELLINGS[spelling])
    assert "loader = ddpify.distributed_loader(data, batch_size=8, shuffle=True)" in output
    assert "model = ddpify.prepare_model(model" in output
    assert "ddpify.set_epoch(loader, epoch)" in output
    assert manual == []  # the project's steps are read: they write nothing


def test_a_projects_method_that_only_evaluates_does_not_make_its_loader_train(tmp_path: Path) -> None:
    output, manual = _convert(
        tmp_path,
        "from steps import Steps",
        """\
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        runner = Steps(model, optimizer)
        for x, y in loader:
            runner.eval_step(x, y)
        """,
    )
    assert "distributed_loader" not in output
    assert any("cannot tell whether loader trains" in m for m in manual), manual


def test_an_object_bound_to_two_classes_names_no_method(tmp_path: Path) -> None:
    """``runner`` is a ``Steps`` on one path and something else on another: its
    ``train_step`` is not known to be the project's, so the loader's role stays undecided."""
    output, manual = _convert(
        tmp_path,
        "from steps import Steps",
        """\
        import random

        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        runner = Steps(model, optimizer) if random.random() < 2 else None
        runner = Steps(model, optimizer)
        runner = object()
        for x, y in loader:
            runner.train_step(x, y)
        """,
    )
    assert "distributed_loader" not in output


def test_a_projects_training_step_that_writes_is_reported(tmp_path: Path) -> None:
    _, manual = _convert(
        tmp_path,
        "from steps import noisy_step",
        """\
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for x, y in loader:
                noisy_step(model, optimizer, x, y)
        """,
    )
    assert any("noisy_step() (another file) runs on every rank with model (the DDP model)" in m for m in manual), manual


def test_a_projects_helper_with_a_progress_bar_runs_on_rank_zero(tmp_path: Path) -> None:
    """A tqdm bar in another file's function draws on every rank (stderr, not print); called as
    a statement, changing nothing it is given, it runs on rank 0 only with the plain model."""
    output, manual = _convert(
        tmp_path,
        "from steps import evaluate, train_step",
        """        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for x, y in loader:
                train_step(model, optimizer, x, y)
            evaluate(model, loader)
        """,
    )
    assert "if ddpify.is_main_process():\n        evaluate(ddpify.unwrap(model), loader)" in output, output
    assert not any("evaluate()" in m for m in manual), manual
