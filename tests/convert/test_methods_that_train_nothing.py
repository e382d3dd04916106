"""Issue 20 (unseen20o glow): a model's own method called on the training path is a bypass of
DDP's forward only where it can train: its result reaches a backward, or the method itself
runs a backward or a step. ``sample = model.module.sample()`` at a print step, its images
written, trains nothing: the model is wrapped and its loader sharded. The class may be this
file's or a project module's (also star-imported); a class that cannot be read keeps the call
a bypass, reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_FLOW = """\
import torch
import torch.nn as nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)

    def forward(self, x):
        return ((self.net(x) - x) ** 2).mean()

    def sample(self, n=4):
        with torch.no_grad():
            return self.net(torch.randn(n, 8))

    def encode(self, x):
        return self.net(x)

    def refine(self, x):
        self.net(x).sum().backward()
        self.optimizer.step()
"""

_TRAIN = """\
import torch
from torch.utils.data import DataLoader, TensorDataset
{imports}

model = Flow()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = torch.nn.DataParallel(model)
loader = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=8, shuffle=True)
for epoch in range(2):
    for i, (x,) in enumerate(loader):
        loss = model(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {call}
torch.save(model.module.state_dict(), "flow.pt")
"""


@pytest.mark.parametrize("imports", ["from flows import Flow", "from flows import *"])
@pytest.mark.parametrize(
    ("call", "wrapped"),
    [
        ("torch.save(model.module.sample(), f'samples_{i}.pt')", True),
        ("images = model.module.sample()\n        print(images.mean())", True),
        ("z = model.module.encode(x)\n        z.pow(2).mean().backward()", False),  # its result trains
        ("model.module.refine(x)", False),  # the method trains itself, outside the forward
    ],
)
def test_a_method_of_a_project_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imports: str, call: str, wrapped: bool) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "flows.py").write_text(_FLOW)
    script = tmp_path / "train.py"
    script.write_text(_TRAIN.format(imports=imports, call=call))
    monkeypatch.chdir(tmp_path)
    result = convert_source(script.read_text(), filename=str(script))
    assert ("model = ddpify.prepare_model(model)" in result.output) is wrapped, result.manual
    assert any("outside its forward" in m.why for m in result.manual) is not wrapped


def test_a_method_of_this_files_class(tmp_path: Path) -> None:
    own = _FLOW.split("    def refine")[0].replace("        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)\n", "")
    text = own + _TRAIN.format(imports="", call="torch.save(model.module.sample(), f'samples_{i}.pt')")
    result = convert_source(text, filename=str(tmp_path / "train.py"))
    assert "model = ddpify.prepare_model(model)" in result.output and not result.manual, result.manual


def test_a_class_that_cannot_be_read_stays_reported(tmp_path: Path) -> None:
    text = _TRAIN.format(imports="from somewhere_else import Flow", call="torch.save(model.module.sample(), f'samples_{i}.pt')")
    result = convert_source(text, filename=str(tmp_path / "train.py"))
    assert any("outside its forward" in m.why for m in result.manual), result.manual
