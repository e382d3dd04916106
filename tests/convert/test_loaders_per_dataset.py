"""Issue 20: a loop over datasets (tasks, splits) whose body builds a loader from each one,
through a helper of another file or a DataLoader here: the datasets are no batches. The
loader is what trains (sharded where it is built, reshuffled there every epoch), and the
report has no "made by code this file does not show" item for the list of datasets. A batch
cut into micro-batches by a tensor operation (``torch.chunk(x, 2)``) stays the batch of the
loader around it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_HELPER = """\
from torch.utils.data import DataLoader


def make_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True)
"""

_SCRIPT = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from data_utils import make_loader


def main():
    tasks = [TensorDataset(torch.randn(64, 1), torch.zeros(64, 1)) for _ in range(2)]
    model = nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    for task, dataset in enumerate(tasks):
        for epoch in range(3):
            loader = {build}
            for x, y in loader:
                optimizer.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("build", ["make_loader(dataset, 8)", "DataLoader(dataset, batch_size=8, shuffle=True)"])
def test_a_loader_built_from_each_dataset_of_a_loop_is_what_trains(tmp_path: Path, build: str) -> None:
    (tmp_path / "data_utils.py").write_text(_HELPER, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(build=build), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    report = "\n".join(f"{c.line} {c.what}" for c in result.changes)
    assert not [m for m in result.manual if "tasks" in m.why]
    assert "ddpify.set_epoch(loader, epoch)" in result.output
    assert ("ddpify.shard(loader)" in result.output) or ("ddpify.distributed_loader(dataset" in result.output), report


def test_micro_batches_cut_by_a_tensor_operation_keep_the_loader_as_the_source() -> None:
    source = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
loader = DataLoader(TensorDataset(torch.randn(64, 1)), batch_size=8, shuffle=True)
for epoch in range(2):
    for (x,) in loader:
        optimizer.zero_grad()
        for part in torch.chunk(x, 2):
            model(part).sum().backward()
        optimizer.step()
"""
    result = convert_source(source)
    assert "ddpify.distributed_loader(" in result.output
    assert not result.manual
