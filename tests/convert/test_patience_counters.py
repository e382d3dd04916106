"""Issue 20, class 8: early stopping on a patience counter (``if total < best: bad = 0 else:
bad += 1`` then ``if bad >= patience: break``) decided from each rank's own shard: the counter
follows the test it is assigned under, so the ``break`` is reported (ranks that leave the loop
early would leave the others waiting in the all-reduce). A counter under a test every rank
decides alike (``epoch % 2``) stays quiet."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
best, bad, patience = float("inf"), 0, 2
for epoch in range(50):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    if {test}:
        best, bad = total, 0
    else:
        bad += 1
    if bad >= patience:
        break
"""


@pytest.mark.parametrize(("test", "reported"), [("total < best", True), ("epoch % 2 == 0", False)])
def test_a_patience_counter_follows_the_test_it_is_counted_under(test: str, reported: bool) -> None:
    result = convert_source(_SCRIPT.format(test=test))
    breaks = [m for m in result.manual if "stops early (break) under `bad >= patience`" in m.why]
    assert bool(breaks) is reported, result.manual
