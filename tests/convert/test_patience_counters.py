"""Issue 20, class 8: early stopping on a patience counter (``if total < best: bad = 0 else:
bad += 1`` then ``if bad >= patience: break``) decided from each rank's own shard: the counter
follows the test it is assigned under, so every rank stops once one would (``ddpify.any_rank``;
a rank that left the loop alone would leave the others waiting in the all-reduce). A
counter under a test every rank decides alike (``epoch % 2``) stays as written."""

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
    """Counted under a test of each rank's own shard total, every rank stops once one would
    (``ddpify.any_rank``); counted under the epoch number, it stays as written."""
    result = convert_source(_SCRIPT.format(test=test))
    assert ("if ddpify.any_rank(bad >= patience):" in result.output) is reported, result.output
    assert not any("bad >= patience" in m.why for m in result.manual), result.manual
