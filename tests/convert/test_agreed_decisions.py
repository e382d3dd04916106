"""Issue 20, class 8: a training loop the ranks may leave, or run, a different number of times
(a stop on each rank's own loss, a time budget, a draw). Converted, every rank takes rank 0's
decision (``ddpify.agreed(test)``): all ranks leave together whichever way rank 0 decides, where
a rank that left alone would leave the others waiting in the next gradient all-reduce. Written
where every rank reaches the ``if`` / ``while`` alike; a ``continue`` before the backward (a NaN
skip) and a decision under another per-rank decision stay reported."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def train(budget=60.0, target=0.01):
    loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start = time.time()
    for epoch in range(10):
        running = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            running += loss.item()
{after}
    return model


if __name__ == "__main__":
    train()
"""

AGREED = {
    "break_on_own_loss": ("        if running < target:\n            break", "if ddpify.agreed(running < target):", "stops"),
    "return_on_budget": ("        if time.time() - start > budget:\n            return model", "if ddpify.agreed(time.time() - start > budget):", "returns"),
    "elif_break": (
        "        if epoch > 100:\n            break\n        elif running < target:\n            break",
        "elif ddpify.agreed(running < target):",
        "stops",
    ),
}


@pytest.mark.parametrize("name", sorted(AGREED))
def test_a_per_rank_stop_becomes_rank_zeros_decision(name: str) -> None:
    after, expected, verb = AGREED[name]
    result = convert_source(_SCRIPT.format(after=after))
    assert expected in result.output, result.output
    assert any("ddpify.agreed(...)" in c.what and f"the training loop {verb} on all ranks together" in c.what for c in result.changes), result.changes
    assert not any("may decide differently" in m.why for m in result.manual), result.manual
    assert convert_source(result.output).output == result.output  # agreed: the same on every rank


def test_a_loop_run_while_a_per_rank_loss_is_high_asks_rank_zero_each_time() -> None:
    script = _SCRIPT.replace("    for epoch in range(10):\n        running = 0.0\n", "    running, epoch = 1.0, 0\n    while running > target:\n        running = 0.0\n")
    result = convert_source(script.format(after="        epoch += 1"))
    assert "while ddpify.agreed(running > target):" in result.output, result.output


def test_a_stop_under_another_per_rank_decision_stays_reported() -> None:
    """Only the ranks that pass the outer test would ask: rank 0's answer cannot reach them all."""
    result = convert_source(_SCRIPT.format(after="        if time.time() - start > budget:\n            if running < target:\n                break"))
    assert "ddpify.agreed(running < target)" not in result.output, result.output
    assert any("stops early (break)" in m.why for m in result.manual), result.manual


def test_a_nan_skip_before_the_backward_stays_reported() -> None:
    """``if torch.isnan(loss): continue``: rank 0's answer would let another rank's NaN into the average."""
    script = _SCRIPT.replace("            loss.backward()\n", "            if torch.isnan(loss):\n                continue\n            loss.backward()\n")
    result = convert_source(script.format(after=""))
    assert "ddpify.agreed" not in result.output, result.output
    assert any("skips the rest of a step (continue)" in m.why for m in result.manual), result.manual


def test_an_epoch_count_stop_stays_as_written() -> None:
    result = convert_source(_SCRIPT.format(after="        if epoch == 3:\n            break"))
    assert "ddpify.agreed" not in result.output and "if epoch == 3:" in result.output
