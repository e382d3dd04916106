"""Issue 20: a model whose own method trains it (``out = self(x); loss.backward();
self.optimizer.step()``, relational-network style) is wrapped, and that method's forward runs
through the DDP wrapper (``ddpify.wrapped(self)(x)``), so its gradients are averaged; its loader
is sharded. Methods that run a submodule directly, hand ``self`` to other code, or never forward
through ``self`` stay reported (wrapping would average nothing). Converting twice changes
nothing."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source

_LOOP = """
data = TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,)))
loader = DataLoader(data, batch_size=16, shuffle=True)
{build}
for epoch in range(2):
    for x, y in loader:
        {step}
"""
_HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


"""

# (class body after __init__'s layers, how the script builds the model, one training step)
ROUTED = {
    "self_call_own_optimizer": (
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        return self.fc(x)

    def train_(self, x, y):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()
""",
        "model = Net()",
        "loss = model.train_(x, y)",
    ),
    "forward_method_optimizer_given": (
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.fc(x)

    def fit_batch(self, batch, target, optimizer):
        optimizer.zero_grad()
        logits = self.forward(batch)
        loss = self.criterion(logits, target)
        loss.backward()
        optimizer.step()
""",
        "net = Net()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)",
        "net.fit_batch(x, y, opt)",
    ),
    "loss_method_stepped_outside": (
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)

    def compute_loss(self, x, y):
        return F.cross_entropy(self(x), y)
""",
        "model = Net()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
        "optimizer.zero_grad()\n        model.compute_loss(x, y).backward()\n        optimizer.step()",
    ),
}

HELD = {
    "submodule_run_directly": (
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        return self.fc(x)

    def train_(self, x, y):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.fc(x), y)
        loss.backward()
        self.optimizer.step()
""",
        "model = Net()",
        "model.train_(x, y)",
    ),
    "self_handed_to_a_helper": (
        """
def loss_of(net, x, y):
    return F.cross_entropy(net.fc(x), y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        return self.fc(x)

    def train_(self, x, y):
        self.optimizer.zero_grad()
        loss_of(self, x, y).backward()
        self.optimizer.step()
""",
        "model = Net()",
        "model.train_(x, y)",
    ),
}


def _script(case: tuple[str, str, str]) -> str:
    body, build, step = case
    return _HEADER + textwrap.dedent(body).lstrip() + _LOOP.format(build=build, step=step)


@pytest.mark.parametrize("name", sorted(ROUTED))
def test_the_models_own_training_method_forwards_through_the_wrapper(name: str) -> None:
    result = convert_source(_script(ROUTED[name]))
    text = result.output
    assert "ddpify.wrapped(self)(" in text, text
    assert "ddpify.prepare_model(" in text and "ddpify.distributed_loader(" in text, text
    assert "self(x)" not in text and "self.forward(" not in text, text
    assert "ddpify.unwrap(self)" not in text, text  # inside its class, self is the plain module
    assert not [m for m in result.manual if "outside its forward" in m.why], result.manual
    assert any("ddpify.wrapped(self)" in c.what for c in result.changes), result.changes
    again = convert_source(text)
    assert again.output == text


@pytest.mark.parametrize("name", sorted(HELD))
def test_a_method_that_runs_submodules_directly_stays_reported(name: str) -> None:
    result = convert_source(_script(HELD[name]))
    assert "ddpify.wrapped(" not in result.output
    assert "ddpify.prepare_model(" not in result.output
    assert [m for m in result.manual if "outside its forward" in m.why], result.manual


def test_evaluation_methods_keep_the_plain_forward() -> None:
    """Only the methods that train are routed: ``test_`` under no_grad keeps ``self(x)``, so
    a rank-0-only evaluation never enters DDP's forward."""
    body, build, step = ROUTED["self_call_own_optimizer"]
    body += """
    def test_(self, x):
        with torch.no_grad():
            return self(x).argmax(1)
"""
    text = convert_source(_script((body, build, step)) + "print(model.test_(x))\n").output
    assert "return self(x).argmax(1)" in text, text
    assert "ddpify.unwrap(model).test_(x)" in text, text
