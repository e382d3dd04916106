"""A ReduceLROnPlateau stepped where every rank steps it gets its metric averaged over the ranks
(``ddpify.mean_over_ranks``): a metric each rank computes from its own shard, and a full
evaluation too, whose augmentation, dropout or sampling may draw from per-rank streams the code
does not show (unseen20s lvl1_cls validated on the train loader's flips, per rank). A scheduler
handed in is known by the script's own test of its type. A step only some ranks reach, and a
script with no DDP model, are left as they are; converting twice changes nothing."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.utils.data import DataLoader, TensorDataset

train = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
valid = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=8)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = ReduceLROnPlateau(optimizer, "min")
for epoch in range(3):
    total = 0.0
    for x, y in train:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    model.eval()
    with torch.no_grad():
        val_loss = sum(torch.nn.functional.mse_loss(model(x), y).item() for x, y in valid)
    model.train()
    {step}
"""


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("scheduler.step(total)", "scheduler.step(ddpify.mean_over_ranks(total))"),
        ("scheduler.step(metrics=total / len(train))", "scheduler.step(metrics=ddpify.mean_over_ranks(total / len(train)))"),
        ("scheduler.step(val_loss)", "scheduler.step(ddpify.mean_over_ranks(val_loss))"),  # alike only if the evaluation draws nothing
        ("if epoch % 2 == 0:\n        scheduler.step(val_loss)", "    scheduler.step(ddpify.mean_over_ranks(val_loss))"),
        ("if total < 1.0:\n        scheduler.step(val_loss)", "    scheduler.step(val_loss)"),  # only the ranks whose shard says so: no collective
    ],
)
def test_a_plateau_metric_from_the_shards_is_averaged(step: str, expected: str) -> None:
    result = convert_source(textwrap.dedent(_SCRIPT.replace("{step}", step)))
    assert f"    {expected}\n" in result.output
    again = convert_source(result.output)
    assert again.output == result.output


def test_without_a_ddp_model_nothing_is_averaged() -> None:
    script = _SCRIPT.replace("{step}", "scheduler.step(total)").replace("optimizer.step()", "pass")
    script = script.replace("optimizer = torch.optim.SGD(model.parameters(), lr=0.1)", "optimizer = None")
    assert "mean_over_ranks" not in convert_source(textwrap.dedent(script)).output


_TRAINER = """\
import torch
from torch import optim


class Trainer:
    def __init__(self, model, loader, optimizer, scheduler):
        self.model, self.loader, self.optimizer, self.scheduler = model, loader, optimizer, scheduler

    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()
            val_loss = self.validate()
            {test}:
                self.scheduler.step(val_loss)
            else:
                self.scheduler.step({other})

    def validate(self):
        with torch.no_grad():
            return sum(torch.nn.functional.mse_loss(self.model(x), y).item() for x, y in self.loader)


model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
Trainer(model, loader, optimizer, make_scheduler(optimizer)).train(3)
"""


@pytest.mark.parametrize(
    ("test", "averaged"),
    [
        ("if type(self.scheduler) == optim.lr_scheduler.ReduceLROnPlateau", True),  # unseen20s lvl1_cls
        ("if isinstance(self.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)", True),
        ("if self.plateau", False),  # nothing says what the scheduler is
    ],
)
def test_a_scheduler_handed_in_is_known_by_the_scripts_type_test(test: str, averaged: bool) -> None:
    result = convert_source(_TRAINER.replace("{test}", test).replace("{other}", "epoch"))
    assert ("self.scheduler.step(ddpify.mean_over_ranks(val_loss))" in result.output) is averaged
    assert "self.scheduler.step(epoch)" in result.output  # the else steps another kind of scheduler


def test_a_negated_type_test_says_nothing_of_its_body() -> None:
    trainer = _TRAINER.replace("{test}", "if not isinstance(self.scheduler, optim.lr_scheduler.ReduceLROnPlateau)").replace("{other}", "epoch")
    assert "mean_over_ranks" not in convert_source(trainer).output
