"""An optimizer handed a module's own parameters by name (``SGD([model.weight])``, a param
group ``{"params": [net.fc.bias]}``) trains that module: it is wrapped like one given
``model.parameters()``. A tensor kept on an object nothing calls (an agent's ``log_alpha``)
ties no module."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
{optimizer}
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "optimizer",
    [
        "optimizer = torch.optim.SGD([model[0].weight, model[1].weight], lr=0.1)",
        'optimizer = torch.optim.Adam([{"params": [model[1].bias]}, {"params": [model[0].weight], "lr": 0.01}], lr=0.1)',
        "params = [model[1].weight, model[1].bias]\noptimizer = torch.optim.SGD(params, lr=0.1)",
    ],
)
def test_parameters_listed_by_name_train_their_module(optimizer: str) -> None:
    result = convert_source(_SCRIPT.format(optimizer=optimizer))
    assert "model = ddpify.prepare_model(model)" in result.output
    assert not result.manual, result.manual


def test_a_tensor_of_an_object_nothing_calls_ties_no_module() -> None:
    script = _SCRIPT.format(optimizer="agent = Agent()\noptimizer = torch.optim.SGD([agent.log_alpha, *model.parameters()], lr=0.1)")
    result = convert_source(script)
    assert "agent = ddpify.prepare_model(agent)" not in result.output
    assert "model = ddpify.prepare_model(model)" in result.output
