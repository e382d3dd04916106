"""Issue 20 (unseen20o glow): ``args`` goes to a function of another file with the model, after
its loader split ``args.batch_size`` across ranks. The report asks a human to look only where
that file names the batch size (SimCLR's labels sized by ``args.batch_size``); glow's
``save_session(model, optim, args)``, whose module never reads it, needs nothing. A file that
cannot be read stays reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_TRAIN = """\
import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from {module} import {helper}

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=8)
args = parser.parse_args()
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 2)), batch_size=args.batch_size, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
    {helper}(model, optimizer, args)
"""

_READS = """\
import torch


def contrast(model, optimizer, args):
    labels = torch.arange(args.batch_size)
    return labels
"""

_IGNORES = """\
import torch


def save_session(model, optimizer, args):
    torch.save({"model": model.state_dict(), "optim": optimizer.state_dict()}, args.save_dir + "/model.pt")
"""


@pytest.mark.parametrize(
    ("module", "helper", "text", "reported"),
    [("losses", "contrast", _READS, True), ("utils", "save_session", _IGNORES, False), ("elsewhere", "save_session", None, True)],
    ids=["names the batch size", "never names it", "cannot be read"],
)
def test_the_batch_size_handed_on_with_args(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, helper: str, text: str | None, reported: bool
) -> None:
    (tmp_path / ".git").mkdir()
    if text is not None:
        (tmp_path / f"{module}.py").write_text(text)
    script = tmp_path / "train.py"
    script.write_text(_TRAIN.format(module=module, helper=helper))
    monkeypatch.chdir(tmp_path)
    result = convert_source(script.read_text(), filename=str(script))
    items = [m.why for m in result.manual if "still sees the global size" in m.why]
    assert bool(items) is reported, result.manual
