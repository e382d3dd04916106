"""Issue 20 (unseen20g's SAM example): training batches read off an object of a project class
built here once (``dataset = Cifar(batch_size)``, then ``for x, y in dataset.train:``) are
sharded where the object is made (``dataset.train = ddpify.shard(dataset.train)``: a plain
DataLoader gets a DistributedSampler at run time, anything else is cut per batch) and
reshuffled every epoch; its evaluation loader stays whole. An object bound in two places is
reported instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_DATA = """\
import torch
from torch.utils.data import DataLoader, TensorDataset


class Cifar:
    def __init__(self, batch_size):
        self.train = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=batch_size, shuffle=True)
        self.test = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=batch_size)
"""

_TRAIN = """\
import torch

import data

{build}
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for {loop}:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        print(sum(torch.nn.functional.mse_loss(model(x), y).item() for x, y in dataset.test))
"""


@pytest.mark.parametrize(
    ("build", "loop", "sharded"),
    [
        ("dataset = data.Cifar(8)", "x, y in dataset.train", True),
        ("dataset = data.Cifar(8)", "i, (x, y) in enumerate(dataset.train)", True),
        ("dataset = data.Cifar(8)\nif torch.cuda.is_available():\n    dataset = data.Cifar(16)", "x, y in dataset.train", False),
    ],
    ids=["for", "enumerate", "bound-twice"],
)
def test_training_batches_of_a_project_object(tmp_path: Path, build: str, loop: str, sharded: bool) -> None:
    (tmp_path / "data.py").write_text(_DATA)
    script = tmp_path / "train.py"
    text = _TRAIN.format(build=build, loop=loop)
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert ("dataset.train = ddpify.shard(dataset.train)" in result.output) is sharded, result.output
    assert ("ddpify.set_epoch(dataset.train, epoch)" in result.output) is sharded
    assert "dataset.test" not in [line.split(" = ")[0] for line in result.output.splitlines()]
    assert bool([m for m in result.manual if "dataset.train" in m.why]) is not sharded, result.manual
