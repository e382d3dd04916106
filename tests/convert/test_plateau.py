"""A ReduceLROnPlateau stepped with a metric each rank computes from its own shard gets the
metric averaged over the ranks (``ddpify.mean_over_ranks``); a metric every rank computes alike
(a full evaluation) is left as it is, as is a script with no DDP model; converting twice
changes nothing."""

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
        ("scheduler.step(val_loss)", "scheduler.step(val_loss)"),  # the whole validation set on every rank: alike
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
