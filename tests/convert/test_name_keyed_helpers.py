"""Issue 20 (unseen20h's ddim): code that keeps what it reads from a model by its members'
names (an EMA helper's ``register(model)`` / ``update(model)`` over ``named_parameters()``)
gets the plain module, ``ddpify.unwrap(model)``: through the DDP wrapper every name starts
with ``module.``, so the EMA it saves no longer loads into the model. Its class in a project
module or in this file; code that calls the model (a forward) keeps the wrapper. A helper named
``get_ckpt_path`` (it downloads) is no checkpoint save."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_EMA = """\
import torch.nn as nn


class EMAHelper:
    def __init__(self, mu=0.999):
        self.mu, self.shadow = mu, {}

    def register(self, module):
        if isinstance(module, nn.DataParallel):
            module = module.module
        for name, param in module.named_parameters():
            self.shadow[name] = param.data.clone()

    def update(self, module):
        for name, param in module.named_parameters():
            self.shadow[name].data = (1.0 - self.mu) * param.data + self.mu * self.shadow[name].data

    def score(self, module, x):
        keys = list(module.state_dict())
        return module(x).sum() + len(keys)
"""

_TRAIN = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

{imports}

def main():
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ema_helper = EMAHelper(mu=0.9) if True else None
    ema_helper.register(model)
    loader = DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=8, shuffle=True)
    for epoch in range(2):
        for (x,) in loader:
            loss = model(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema_helper.update(model)
            ema_helper.score(model, x)
    torch.save([model.state_dict(), ema_helper.shadow], "ckpt.pth")
"""


@pytest.mark.parametrize("where", ["project", "file"])
def test_an_ema_keyed_by_parameter_names_gets_the_plain_module(tmp_path: Path, where: str) -> None:
    if where == "project":
        (tmp_path / "ema.py").write_text(_EMA)
        text = _TRAIN.format(imports="from ema import EMAHelper\n")
    else:
        text = _TRAIN.format(imports=_EMA.replace("import torch.nn as nn\n", ""))
    script = tmp_path / "main.py"
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert "ema_helper.register(ddpify.unwrap(model))" in result.output
    assert "ema_helper.update(ddpify.unwrap(model))" in result.output
    assert "ema_helper.score(model, x)" in result.output  # it runs the model's forward: the wrapper stays
    assert any("keys what it keeps by the model's parameter names" in c.what for c in result.changes)
    assert convert_source(result.output, filename=str(script)).output == result.output


def test_a_getter_of_a_checkpoint_path_is_no_save(tmp_path: Path) -> None:
    (tmp_path / "ckpt_util.py").write_text(
        "import os\n\n\ndef get_ckpt_path(name, root):\n    path = os.path.join(root, name)\n    if not os.path.exists(path):\n"
        "        open(path, 'wb').close()\n    return path\n"
    )
    text = """\
import torch
import torch.nn as nn

from ckpt_util import get_ckpt_path


def main(loader):
    model = nn.Linear(4, 1)
    model.load_state_dict(torch.load(get_ckpt_path("ema", "weights")))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for (x,) in loader:
        model(x).mean().backward()
        optimizer.step()
"""
    script = tmp_path / "main.py"
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert not any("saves a checkpoint" in m.why for m in result.manual), result.manual
    assert not any("saves a checkpoint" in c.what for c in result.changes)
