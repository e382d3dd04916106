"""Issue 20: a counter of training samples (``global_step += x.size(0)``) that drives the
learning-rate schedule or the end of training counts only its own shard on each rank: the
warm-up would last world_size times as many steps as in the original. The increment is scaled by
the number of ranks (``x.size(0) * ddpify.world_size()``; one process: as before). A counter
that only averages the rank's own losses (``total / n``) is left alone; converting twice
changes nothing."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_HEAD = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

SCALED = {
    "scheduler_stepped_with_the_count": (
        """
warm_up = 32
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / warm_up))
global_step = 0
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step(global_step)
        global_step += x.size(0)
""",
        "global_step += x.size(0) * ddpify.world_size()",
    ),
    "learning_rate_set_from_the_count": (
        """
seen = 0
for epoch in range(2):
    for images, target in loader:
        lr = 0.1 * min(1.0, seen / 40)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(images), target).backward()
        optimizer.step()
        seen += len(images)
""",
        "seen += len(images) * ddpify.world_size()",
    ),
    "training_ends_after_a_number_of_samples": (
        """
samples = 0
while samples < 200:
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        samples += x.shape[0]
""",
        "samples += x.shape[0] * ddpify.world_size()",
    ),
}

KEPT = {
    "a_per_rank_average": """
for epoch in range(2):
    total, n = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * x.size(0)
        n += x.size(0)
    print(total / n)
""",
    "a_count_only_printed": """
seen = 0
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    seen += x.size(0)
print(seen)
""",
}


@pytest.mark.parametrize("name", sorted(SCALED))
def test_a_sample_counter_that_drives_training_counts_every_rank(name: str) -> None:
    body, expected = SCALED[name]
    result = convert_source(_HEAD + body)
    assert expected in result.output, result.output
    assert any("world_size" in c.what and "samples" in c.what for c in result.changes), result.changes
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_counter_of_the_ranks_own_samples_is_kept(name: str) -> None:
    result = convert_source(_HEAD + KEPT[name])
    assert "world_size()" not in result.output, result.output

