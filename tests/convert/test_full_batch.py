"""Full-batch training (issue 20: pyGAT's ``model(features, adj)`` over the whole graph, a
latent ODE fit to all its trajectories at once): there is nothing to shard, so every rank
computes the one-process step. The conversion stays right, and the report says that DDP makes
it no faster, at the backward, naming the forward and the data it reads."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source

_GRAPH = """\
import torch
import torch.nn.functional as F

features = torch.randn(50, 8)
labels = torch.randint(0, 3, (50,))
idx_train = torch.arange(30)
model = torch.nn.Linear(8, 3)
optimizer = torch.optim.Adam(model.parameters())


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features)
    loss = F.cross_entropy(output[idx_train], labels[idx_train])
    loss.backward()
    optimizer.step()


for epoch in range(5):
    train(epoch)
"""

_TRAJECTORIES = """\
import torch


def main():
    trajectories = torch.randn(16, 10, 2)
    encoder = torch.nn.GRUCell(2, 4)
    optimizer = torch.optim.Adam(encoder.parameters())
    for step in range(20):
        optimizer.zero_grad()
        h = torch.zeros(16, 4)
        for t in range(10):
            obs = trajectories[:, t, :]
            h = encoder(obs, h)
        loss = h.pow(2).mean()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""

_DRAWN_EACH_STEP = """\
import torch

model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(20):
    x = torch.randn(32, 8)
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
"""

_LOADER = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(64, 8))
loader = DataLoader(data, batch_size=8, shuffle=True)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for (x,) in loader:
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (_GRAPH, "model(features) trains on features, made once before training"),
        (_TRAJECTORIES, "encoder(obs, h) trains on trajectories, made once before training"),
        (_DRAWN_EACH_STEP, None),  # new data every step: the seeds decide, not this item
        (_LOADER, None),  # sharded
    ],
)
def test_full_batch_training_is_said_to_gain_nothing(script: str, said: str | None) -> None:
    result = convert_source(textwrap.dedent(script))
    found = [m.why for m in result.manual if "full-batch training" in m.why]
    if said is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(said), result.manual
        assert "ddpify.prepare_model(" in result.output  # still converted: right, just no faster
