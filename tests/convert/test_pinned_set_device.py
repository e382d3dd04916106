"""unseen20t pt.darts: ``torch.cuda.set_device(config.gpus[0])`` kept in a DDP conversion put
every rank on GPU 0 after ``ddpify.setup()`` had chosen the rank's own. In a DDP script any
``set_device`` / ``torch.cuda.device`` argument that is no rank's own value (a configuration
list, a constant, a module-level list) becomes ``ddpify.device_from(...)``; a rank value stays;
a script that gets no DDP keeps its device as written."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import torch.nn as nn

GPUS = [0]


def main(local_rank, config):
    {line}
    model = nn.Linear(4, 1).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("torch.cuda.set_device(config.gpus[0])", "torch.cuda.set_device(ddpify.device_from(config.gpus[0]))"),
        ("torch.cuda.set_device(GPUS[0])", "torch.cuda.set_device(ddpify.device_from(GPUS[0]))"),
        ("torch.cuda.set_device(0)", "torch.cuda.set_device(ddpify.device_from(0))"),
        ("torch.cuda.set_device(device=0)", "torch.cuda.set_device(device=ddpify.device_from(0))"),
        ("with torch.cuda.device(config.gpu):\n        pass", "with torch.cuda.device(ddpify.device_from(config.gpu)):"),
    ],
)
def test_a_pinned_device_becomes_the_ranks_own(line: str, expected: str) -> None:
    result = convert_source(_SCRIPT.format(line=line))
    assert expected in result.output
    assert "names one device for every rank" in "\n".join(c.what for c in result.changes)
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize("line", ["torch.cuda.set_device(local_rank)", "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))"])
def test_a_rank_value_stays(line: str) -> None:
    assert line in convert_source("import os\n" + _SCRIPT.format(line=line)).output


def test_without_ddp_the_device_stays() -> None:
    script = "import torch\n\nconfig = None\ntorch.cuda.set_device(config.gpus[0])\nprint(torch.zeros(1).cuda())\n"
    assert convert_source(script).output.count("ddpify.device_from") == 0
