"""Issue 20, class 4 (unseen20k's pixelcnn_main): a forward that computes a value with a
submodule and drops it leaves the parameters that only produce it without a gradient, so the
wrap gets ``find_unused_parameters=True``. So does a distillation teacher the forward runs only
without gradients (under ``no_grad`` or ``set_grad_enabled(False)``, or detached). Spellings: a head's output assigned and never read,
a submodule called as a statement, ``_`` for one output of a project-class block, one stream of
a loop over a module list kept after the loop. Not dropped: outputs read later (also later in
the same loop body, or by the next iteration when one submodule runs in every iteration), and the extra outputs of a ``torch.nn`` module (an LSTM's hidden state is
computed from the same parameters as its output)."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x, y):
        return self.a(x), self.b(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 3)
{init}

    def forward(self, x):
{body}


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
"""

_BODY = "        self.body = nn.Linear(8, 8)"
_AUX = _BODY + "\n        self.aux_head = nn.Linear(8, 3)"
_BLOCK = "        self.block = Block()"
_LAYERS = "        self.layers = nn.ModuleList([Block() for _ in range(2)])"
_DROPPED = {
    "a head's output never read": (_AUX, "        h = self.body(x)\n        aux = self.aux_head(h)\n        return self.head(h)"),
    "a submodule called as a statement": (_AUX, "        h = self.body(x)\n        self.aux_head(h)\n        return self.head(h)"),
    "one output of a block as _": (_BLOCK, "        h, _ = self.block(x, x)\n        return self.head(h)"),
    "one stream after a loop": (_LAYERS, "        v, h = x, x\n        for layer in self.layers:\n            v, h = layer(v, h)\n        return self.head(h)"),
    # the last layer's v is read by the next iteration only, which never comes: still dropped
    "one stream read back at the top of the loop": (
        _LAYERS,
        "        v, h = x, x\n        for layer in self.layers:\n            h = h + v\n            v, h = layer(v, h)\n        return self.head(h)",
    ),
}
_TEACHER = _BODY + "\n        self.teacher = nn.Linear(8, 8)"
_DROPPED.update(
    {
        "a teacher under no_grad": (_TEACHER, "        with torch.no_grad():\n            t = self.teacher(x)\n        return self.head(self.body(x) + t)"),
        "a detached teacher": (_TEACHER, "        t = self.teacher(x).detach()\n        return self.head(self.body(x) - t)"),
        "a teacher under set_grad_enabled(False)": (
            _TEACHER,
            "        with torch.set_grad_enabled(False):\n            t = self.teacher(x)\n        return self.head(self.body(x) * t)",
        ),
    }
)
_KEPT = {
    "a teacher also run with gradients": (
        _TEACHER,
        "        with torch.no_grad():\n            t = self.teacher(x)\n        return self.head(self.teacher(self.body(x)) + t)",
    ),
    "both outputs read later": (_BLOCK, "        h, g = self.block(x, x)\n        return self.head(h + g)"),
    "read later in the loop body": (
        _LAYERS,
        "        v, h = x, x\n        for layer in self.layers:\n            v, h = layer(v, h)\n            h = h + v\n        return self.head(h)",
    ),
    # unseen20q's sat_caption: the same submodule every step, its output fed into the next step
    # (greedy decoding); only the last step's is unread, and its parameters have the others'
    "one submodule's output fed back into the next step": (
        _BODY,
        "        h, out = x, x\n        for t in range(3):\n            h = torch.tanh(h + out)\n            out = self.body(h)\n        return self.head(h)",
    ),
    "a while loop's carried value": (
        _BODY,
        "        h, n = x, 0\n        while n < 3:\n            z = h * 2\n            h = self.body(z)\n            n += 1\n        return self.head(z)",
    ),
    "an LSTM's hidden state": (
        "        self.lstm = nn.LSTM(8, 8, batch_first=True)",
        "        out, (h, c) = self.lstm(x.unsqueeze(1))\n        return self.head(out[:, -1])",
    ),
}


def _wrap(case: tuple[str, str]) -> str:
    init, body = case
    output = convert_source(_SCRIPT.format(init=init, body=body)).output
    return next(line.strip() for line in output.splitlines() if "ddpify.prepare_model(" in line)


@pytest.mark.parametrize("case", _DROPPED.values(), ids=_DROPPED.keys())
def test_a_dropped_output_wraps_with_find_unused_parameters(case: tuple[str, str]) -> None:
    assert _wrap(case) == "model = ddpify.prepare_model(model, find_unused_parameters=True)"


@pytest.mark.parametrize("case", _KEPT.values(), ids=_KEPT.keys())
def test_outputs_that_are_used_do_not(case: tuple[str, str]) -> None:
    assert "find_unused_parameters" not in _wrap(case)


_GROUPS = """\
import torch
import torch.nn as nn


class SRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 9, padding=4)
        self.conv2 = nn.Conv2d(8, 4, 5, padding=2)
        self.conv3 = nn.Conv2d(4, 1, 5, padding=2){extra}

    def forward(self, x):
        return {scale}self.conv3(torch.relu(self.conv2(torch.relu(self.conv1(x)))))


model = SRCNN()
optimizer = torch.optim.Adam(
    [{{"params": model.conv1.parameters()}}, {{"params": model.conv2.parameters()}}, {{"params": model.conv3.parameters(), "lr": 1e-5}}],
    lr=1e-4,
)
for x, y in loader:
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("extra", "scale", "unused"),
    [
        ("", "", False),  # unseen20k's srcnn_train: the groups hold every parameter the model has
        ("\n        self.scale = nn.Parameter(torch.ones(1))", "self.scale * ", True),  # one the optimizer is not given
    ],
)
def test_param_groups_covering_every_submodule_leave_no_unused_parameters(extra: str, scale: str, unused: bool) -> None:
    result = convert_source(_GROUPS.format(extra=extra, scale=scale))
    wrap = next(line.strip() for line in result.output.splitlines() if "ddpify.prepare_model(" in line)
    assert ("find_unused_parameters=True" in wrap) is unused
    assert any("reach the optimizer" in c.what for c in result.changes) is unused
