"""Issue 20, class 8: a training loop the ranks may leave, or run, a different number of times
(a stop on each rank's own loss, a time budget, a draw). Converted, every rank leaves as soon as
one rank would (``ddpify.any_rank(test)`` for a ``break`` / ``return`` / exit,
``ddpify.all_ranks(test)`` for a ``while`` test): all ranks leave together, where a rank that
left alone would leave the others waiting in the next gradient all-reduce. Written where every
rank reaches the ``if`` / ``while`` alike; a ``continue`` before the backward (a NaN skip) and a
decision under another per-rank decision stay reported."""

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
    "break_on_own_loss": ("        if running < target:\n            break", "if ddpify.any_rank(running < target):", "stops"),
    "return_on_budget": ("        if time.time() - start > budget:\n            return model", "if ddpify.any_rank(time.time() - start > budget):", "returns"),
    "elif_break": (
        "        if epoch > 100:\n            break\n        elif running < target:\n            break",
        "elif ddpify.any_rank(running < target):",
        "stops",
    ),
}


@pytest.mark.parametrize("name", sorted(AGREED))
def test_a_per_rank_stop_stops_every_rank_once_one_would(name: str) -> None:
    after, expected, verb = AGREED[name]
    result = convert_source(_SCRIPT.format(after=after))
    assert expected in result.output, result.output
    assert any(f"ddpify.any_rank(...): the training loop {verb} on all ranks as soon as one" in c.what for c in result.changes), result.changes
    assert not any("may decide differently" in m.why for m in result.manual), result.manual
    assert convert_source(result.output).output == result.output  # any_rank: the same on every rank


def test_a_loop_run_while_a_per_rank_loss_is_high_runs_while_it_is_on_every_rank() -> None:
    script = _SCRIPT.replace("    for epoch in range(10):\n        running = 0.0\n", "    running, epoch = 1.0, 0\n    while running > target:\n        running = 0.0\n")
    result = convert_source(script.format(after="        epoch += 1"))
    assert "while ddpify.all_ranks(running > target):" in result.output, result.output


def test_a_stop_under_another_per_rank_decision_stays_reported() -> None:
    """Only the ranks that pass the outer test would ask: the others would not join the reduction."""
    result = convert_source(_SCRIPT.format(after="        if time.time() - start > budget:\n            if running < target:\n                break"))
    assert "ddpify.any_rank(running < target)" not in result.output, result.output
    assert any("stops early (break)" in m.why for m in result.manual), result.manual


def test_a_nan_skip_before_the_backward_stays_reported() -> None:
    """``if torch.isnan(loss): continue``: the ranks that go on would run a backward the others skip."""
    script = _SCRIPT.replace("            loss.backward()\n", "            if torch.isnan(loss):\n                continue\n            loss.backward()\n")
    result = convert_source(script.format(after=""))
    assert "any_rank" not in result.output, result.output
    assert any("skips the rest of a step (continue)" in m.why for m in result.manual), result.manual


def test_an_epoch_count_stop_stays_as_written() -> None:
    result = convert_source(_SCRIPT.format(after="        if epoch == 3:\n            break"))
    assert "any_rank" not in result.output and "if epoch == 3:" in result.output
