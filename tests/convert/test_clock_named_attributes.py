"""unseen20s lvl1_cls: a trainer names its checkpoint folder in ``__init__`` through its own
attributes (``now = datetime.now()``, ``self.time = now.strftime(...)``, ``self.checkpoint_dir =
"./checkpoints/" + self.time``, ``os.makedirs(self.checkpoint_dir)``): the clock read reaches the
folder through ``self.`` attributes, so ranks a second apart made different folders. The read
becomes ``ddpify.agreed(...)``, also in a trainer module converted alongside the script that
wraps its model; a clock read at each use stays reported."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import os
import time
from datetime import datetime

import torch


class Trainer:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        {stamp}
        os.makedirs(self.checkpoint_dir, exist_ok=True)

    def train(self):
        for x, y in self.loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        torch.save(self.model.state_dict(), os.path.join(self.checkpoint_dir, "model.pt"))


loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
Trainer(model, loader).train()
"""


@pytest.mark.parametrize(
    ("stamp", "agreed"),
    [
        (
            'now = datetime.now()\n        self.time = now.strftime("%Y-%m-%d_%H.%M.%S")\n        self.checkpoint_dir = "./checkpoints/" + self.time',
            "now = ddpify.agreed(datetime.now())",
        ),
        (
            'self.stamp = time.strftime("%m%d-%H%M%S")\n        self.checkpoint_dir = os.path.join("runs", self.stamp)',
            'self.stamp = ddpify.agreed(time.strftime("%m%d-%H%M%S"))',
        ),
    ],
)
def test_a_clock_read_reaching_the_folder_through_attributes_is_rank_zeros(stamp: str, agreed: str) -> None:
    result = convert_source(_SCRIPT.replace("{stamp}", stamp))
    assert agreed in result.output
    assert not [m for m in result.manual if "clock" in m.why]
    assert convert_source(result.output).output == result.output


def test_an_attribute_of_another_class_is_another_value() -> None:
    """Review of d8cf094: ``self.time`` of a meter class (the clock) is not the trainer's
    ``self.time`` (a run name): the trainer's folder is not clock-named, nothing is agreed."""
    meter = "class Meter:\n    def __init__(self):\n        self.time = time.time()\n\n\n"
    script = _SCRIPT.replace("class Trainer:", meter + "class Trainer:").replace(
        "{stamp}", 'self.time = "run1"\n        self.checkpoint_dir = os.path.join("runs", self.time)'
    )
    result = convert_source(script)
    assert "agreed" not in result.output
