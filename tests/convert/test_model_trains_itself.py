"""Issue 20: a model whose own method trains it (``out = self(x); loss.backward();
self.optimizer.step()``, relational-network style) is wrapped, and that method's forward runs
through the DDP wrapper (``ddpify.wrapped(self)(x)``), so its gradients are averaged; its loader
is sharded. Methods that run a submodule directly, hand ``self`` to other code, or never forward
through ``self`` stay reported (wrapping would average nothing). Converting twice changes
nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

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


# ---------------------------------------------------------------- own methods run as the wrapper's forward
_FLOW = """
class Flow(nn.Sequential):
    def forward(self, x):
        for layer in self:
            x = layer(x)
        return x

    def log_probs(self, x):
        u = self(x)
        return -0.5 * u.pow(2).sum(-1)
"""
_AGENT = """
class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(8, 4)
        self.critic = nn.Linear(8, 1)

    def forward(self, x):
        return self.actor(x)

    def evaluate(self, x, y):
        return F.cross_entropy(self.actor(x), y) + self.critic(x).pow(2).mean()
"""
_TWO_METHODS = """
class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 2)
        self.dec = nn.Linear(2, 8)

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return self.dec(z)
"""
_STEP = "optimizer.zero_grad()\n        {loss}.backward()\n        optimizer.step()"
THROUGH = {
    "whole_forward": (_FLOW, "model = Flow(nn.Linear(8, 8), nn.Tanh())", "-model.log_probs(x).mean()", "log_probs", False),
    "submodules_directly": (_AGENT, "model = Agent()", "model.evaluate(x, y)", "evaluate", True),
    "loss_method": (_FLOW.replace("def log_probs", "def compute_loss"), "model = Flow(nn.Linear(8, 8))", "-model.compute_loss(x).mean()", "compute_loss", False),
}


@pytest.mark.parametrize("name", sorted(THROUGH))
def test_an_own_method_on_the_training_path_runs_as_the_wrappers_forward(name: str) -> None:
    body, build, loss, method, unused = THROUGH[name]
    build += "\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
    result = convert_source(_script((body, build, _STEP.format(loss=loss))))
    text = result.output
    assert f"ddpify.through_ddp(model).{method}(" in text, text
    assert ("find_unused_parameters=True" in text) is unused, text
    assert not [m for m in result.manual if "outside its forward" in m.why], result.manual
    assert convert_source(text).output == text


def test_two_own_methods_in_one_step_stay_reported() -> None:
    """``model.decode(model.encode(x))``: two forwards through the wrapper before one backward
    would leave DDP unsure which parameters the step used."""
    build = "model = VAE()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
    result = convert_source(_script((_TWO_METHODS, build, _STEP.format(loss="(model.decode(model.encode(x)) - x).pow(2).mean()"))))
    assert "through_ddp" not in result.output and "prepare_model" not in result.output
    assert [m for m in result.manual if "outside its forward" in m.why], result.manual


_AGENT_STEPS = {
    # an inner loop, then the joint step: each call has its own backward (vae_lagging's burn-in)
    "inner_loop_then_step": (
        "for _ in range(2):\n            optimizer.zero_grad()\n            model.evaluate(x, y).backward()\n            optimizer.step()\n"
        "        optimizer.zero_grad()\n        loss = model.evaluate(x, y)\n        loss.backward()\n        optimizer.step()",
        True,
    ),
    # two branches, one call each
    "one_per_branch": (
        "if epoch % 2:\n            loss = model.evaluate(x, y)\n            loss.backward()\n"
        "        else:\n            loss = 2 * model.evaluate(x, y)\n            loss.backward()\n        optimizer.step()",
        True,
    ),
    # the second call before the first one's backward: two forwards, one backward
    "two_before_one_backward": (
        "first = model.evaluate(x, y)\n        second = model.evaluate(x, y)\n        (first + second).backward()\n        optimizer.step()",
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(_AGENT_STEPS))
def test_an_own_method_called_twice_runs_through_the_wrapper_when_each_call_has_its_backward(name: str) -> None:
    """unseen20q's vae_lagging: ``vae.loss(x)`` in an inner encoder-only loop and again in the
    joint step after it. Each call's backward comes before the next call: one forward, one
    backward, as DDP needs. Two calls before one backward stay reported."""
    step, through = _AGENT_STEPS[name]
    build = "model = Agent()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
    result = convert_source(_script((_AGENT, build, step)))
    text = result.output
    assert (text.count("ddpify.through_ddp(model).evaluate(") == 2) is through, text
    assert bool([m for m in result.manual if "outside its forward" in m.why]) is not through, result.manual
    assert convert_source(text).output == text


def test_a_method_of_a_project_module_class(tmp_path: Path) -> None:
    """The model's class lives in a sibling module (``import flows as fnn``): its own methods
    are known from that module (``Helper.module_methods``); not proven to run the whole model
    from here, so the wrap looks for unused parameters."""
    (tmp_path / "flows.py").write_text(_HEADER + textwrap.dedent(_FLOW).lstrip())
    build = "model = fnn.Flow(nn.Linear(8, 8), nn.Tanh())\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
    text = _HEADER + "import flows as fnn\n" + _LOOP.format(build=build, step=_STEP.format(loss="-model.log_probs(x).mean()"))
    script = tmp_path / "main.py"
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert "ddpify.through_ddp(model).log_probs(x)" in result.output, result.output
    assert "find_unused_parameters=True" in result.output
    (tmp_path / "flows.py").write_text(_HEADER + "class Flow:\n    def log_probs(self, x):\n        return x\n")
    plain = convert_source(text, filename=str(script))  # not an nn.Module: nothing to wrap
    assert "through_ddp" not in plain.output
