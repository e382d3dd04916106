"""A model moved between devices inside the training loop after its wrap (``model.eval().cpu()``
around a checkpoint): a chain of moves and mode switches is dropped, anything else is reported.
A tensor the model returns (``rec.initHidden().to(device)``, a latent ODE's hidden state) moving
is no move of the model and is said nothing about."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
from torch.utils.data import DataLoader, TensorDataset


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)

    def init_hidden(self):
        return torch.zeros(1)


device = torch.device("cpu")
loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        {line}
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("line", "reported"),
    [
        ("h = model.init_hidden().to(device)", False),  # a tensor the model returns
        ("model.state_dict()['fc.weight'].cpu()", False),
        ("model.half().to(device)", True),  # the model itself, changed beyond a move
    ],
)
def test_only_moves_of_the_model_itself_are_reported(line: str, reported: bool) -> None:
    result = convert_source(textwrap.dedent(_SCRIPT.replace("{line}", line)))
    assert any("moved between devices after the DDP wrap" in m.why for m in result.manual) is reported, result.manual
