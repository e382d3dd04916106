"""Averages of the rank's shard that are only shown (unseen20t dgcnn, unseen20s lvl1_cls): once
per epoch on every rank they become ``ddpify.mean_over_ranks(...)``; a per-step value inside the
batch loop, one behind a rank test, a sum or count, and a division by the whole dataset's size
(``shard_sums`` reports it) stay as written. The run-time proof is
``tests/e2e/test_run_time_choices.py::test_shown_epoch_means_are_the_one_process_values``."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import torch.distributed as dist
import torch.nn as nn

train_set = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(train_set, batch_size=8, shuffle=True)
for epoch in range(2):
    total, count = 0.0, 0
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * x.size(0)
        count += x.size(0)
        if i % 2 == 0:
            print("step", total / count)
    {shown}
"""


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        ('print("epoch", total / count)', 'print("epoch", ddpify.mean_over_ranks(total / count))'),
        ('print(f"epoch {total / count:.3f}")', 'print(f"epoch {ddpify.mean_over_ranks(total / count):.3f}")'),
        ('line = "loss %.3f" % (total / count)', 'line = "loss %.3f" % ddpify.mean_over_ranks(total / count)'),
        ("mean = total / count\n    print(mean)", "mean = ddpify.mean_over_ranks(total / count)"),
        ('logger.info("epoch %s", total / count)', 'logger.info("epoch %s", ddpify.mean_over_ranks(total / count))'),
    ],
)
def test_a_shown_epoch_average_is_averaged_over_the_ranks(shown: str, expected: str) -> None:
    result = convert_source(_SCRIPT.format(shown=shown))
    assert expected.replace("print(", "ddpify.print(") in result.output or expected in result.output
    assert 'print("step", total / count)' in result.output  # per step, in the batch loop: rank 0's own
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize(
    "shown",
    [
        'print("epoch", total)',  # a sum: a mean of sums is no total
        "scale = torch.log(total / count)",  # a computation, not an output: torch.log is no logger's
        'print("epoch", total / len(train_set))',  # the whole dataset's size: reported by shard_sums
        'if dist.get_rank() == 0:\n        print("epoch", total / count)',  # not every rank: no collective
    ],
)
def test_what_is_not_an_every_rank_average_stays(shown: str) -> None:
    assert "mean_over_ranks" not in convert_source(_SCRIPT.format(shown=shown)).output


_SCORES = """\
import numpy as np
import torch
import torch.nn as nn
from sklearn import metrics

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
train_loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
test_loader = torch.utils.data.DataLoader(data, batch_size=8)
for epoch in range(3):
    train_pred, train_true = [], []
    for x, y in train_loader:
        opt.zero_grad()
        logits = model(x)
        nn.functional.cross_entropy(logits, y).backward()
        opt.step()
        train_true.append(y.numpy())
        train_pred.append(logits.argmax(1).numpy())
    train_true, train_pred = np.concatenate(train_true), np.concatenate(train_pred)
    print("train %.3f %.3f" % (metrics.accuracy_score(train_true, train_pred), metrics.f1_score(train_true, train_pred)))
    test_pred, test_true = [], []
    with torch.no_grad():
        for x, y in test_loader:
            test_true.append(y.numpy())
            test_pred.append(model(x).argmax(1).numpy())
    print("test %.3f" % metrics.accuracy_score(np.concatenate(test_true), np.concatenate(test_pred)))
"""


def test_a_library_score_of_the_ranks_arrays_is_reported_once_per_line() -> None:
    """dgcnn: ``metrics.accuracy_score(train_true, train_pred)`` of the shard's arrays; no mean of
    per-rank scores in general (an F1), so reported with the gather; the unsharded test set's
    score is every rank's alike."""
    result = convert_source(_SCORES)
    items = [m for m in result.manual if "rank's own arrays" in m.why]
    assert [m.line for m in items] == [21]
    assert "metrics.accuracy_score(...), metrics.f1_score(...)" in items[0].why
    assert "all_gather_object" in items[0].todo
