"""Issue 20, class 8: decisions taken from an average of each rank's own shard (the best
checkpoint, early stopping, a plateau scheduler) are one decision for all ranks: the average is
taken over the ranks where it is computed, ``ddpify.mean_over_ranks(...)``, so the save waits
for rank 0 as usual and the loop stops on every rank at once. Spellings of an average: a
division, a meter's ``.avg``, ``np.mean(...)``, a tensor's ``.mean().item()``. Not averaged: a
per-rank sum (it would need a sum: still reported), a value computed inside the loop over the
sharded batches (a collective per step, and not an epoch's decision)."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Meter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, value):
        self.sum += value
        self.count += 1
        self.avg = self.sum / self.count


loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best, bad = float("inf"), 0
for epoch in range(20):
    total, losses, meter = 0.0, [], Meter()
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        losses.append(loss.detach())
        meter.update(loss.item())
    epoch_loss = {value}
    if epoch_loss < best:
        best, bad = epoch_loss, 0
        torch.save(model.state_dict(), "best.pt")
    else:
        bad += 1
        if bad >= 3:
            break
"""


@pytest.mark.parametrize(
    "value",
    ["total / len(loader)", "meter.avg", "np.mean([l.item() for l in losses])", "torch.stack(losses).mean().item()"],
)
def test_an_epoch_average_that_decides_is_averaged_over_the_ranks(value: str) -> None:
    result = convert_source(_SCRIPT.format(value=value))
    assert f"    epoch_loss = ddpify.mean_over_ranks({value})\n" in result.output
    assert 'ddpify.save(ddpify.unwrap(model).state_dict(), "best.pt")' in result.output  # waits, as usual
    assert not result.manual, result.manual


def test_a_per_rank_sum_is_not_averaged_and_stays_reported() -> None:
    result = convert_source(_SCRIPT.format(value="total"))
    assert "mean_over_ranks" not in result.output
    assert any("may decide differently" in item.why for item in result.manual)


def test_an_average_inside_the_batch_loop_is_not_averaged() -> None:
    script = _SCRIPT.format(value="total").replace(
        "        meter.update(loss.item())\n", "        meter.update(loss.item())\n        running = total / 8\n        if running > 1e6:\n            break\n"
    )
    result = convert_source(script)
    assert "running = ddpify.mean_over_ranks" not in result.output
