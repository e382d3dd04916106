"""A loader's batch-size variable that also sizes a tensor in the training loop keeps the loader
at the per-process batch (``planners/batch_lengths.py``): the latent noise of a GAN drawn from a
distribution (``zdist.sample((batch_size,))``) is such a size; a count of draws is not."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import random

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

batch_size = 8
zdist = torch.distributions.Normal(torch.zeros(4), torch.ones(4))
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=batch_size, shuffle=True)
model = nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for (x,) in loader:
        {use}
        loss = (model(x) - z).pow(2).mean()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("use", "sizes"),
    [
        ("z = zdist.sample((batch_size,))", True),
        ("z = zdist.rsample(sample_shape=(batch_size,))", True),
        ("z = zdist.sample([batch_size])", True),
        ("z = torch.ones(batch_size, 4)", True),
        ("z = x[random.sample(range(x.size(0)), batch_size // 8)]", False),
        ("z = x * batch_size", False),
    ],
)
def test_a_batch_size_that_sizes_a_tensor_keeps_the_per_process_batch(use: str, sizes: bool) -> None:
    result = convert_source(textwrap.dedent(_SCRIPT.replace("{use}", use)))
    assert ("per_process_batch=True" in result.output) is sizes
    assert "ddpify.distributed_loader(" in result.output


_CONFIGURED = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

config = {"batch_size": 8, "epochs": 2}
batch_size = config["batch_size"]
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size={batch}, shuffle=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
{before}
for epoch in range(config["epochs"]):
    for (x,) in loader:
        loss = nn.functional.mse_loss(model(x), {target})
        loss.backward()
        optimizer.step()
{after}
"""


@pytest.mark.parametrize(
    ("batch", "before", "target", "after", "sizes"),
    [
        # a GAN's targets made once before the loop (pytorch-GANs' training_config['batch_size'])
        ('config["batch_size"]', 'real_gt = torch.ones((config["batch_size"], 1))', "real_gt", "", True),
        ("batch_size", "real_gt = torch.ones(batch_size, 1)", "real_gt", "", True),
        ('config["batch_size"]', "", 'torch.zeros(config["batch_size"], 1)', "", True),
        # made before the loop but only compared after it: nothing in training depends on it
        ("batch_size", "fixed = torch.ones(batch_size, 1)", "torch.zeros_like(x[:, :1])", "print(model(x).shape == fixed.shape)", False),
        ('config["batch_size"]', "", "torch.zeros_like(x[:, :1])", 'print(config["batch_size"])', False),
    ],
)
def test_a_configured_batch_size_that_sizes_training_tensors_keeps_the_per_process_batch(
    batch: str, before: str, target: str, after: str, sizes: bool
) -> None:
    script = _CONFIGURED.replace("{batch}", batch).replace("{before}", before).replace("{target}", target).replace("{after}", after)
    result = convert_source(script)
    assert ("per_process_batch=True" in result.output) is sizes, result.output
    assert "ddpify.distributed_loader(" in result.output


_CARRIED = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 8


def make_targets(n):
    return torch.ones(n, 1)


class Critic:
    def __init__(self, batch_size):
        self.batch_size = batch_size
        self.net = nn.Linear(4, 1)

    def targets(self):
        return torch.ones(self.batch_size, 1)


loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
critic = Critic({handed})
optimizer = torch.optim.SGD(critic.net.parameters(), lr=0.1)
for epoch in range(2):
    for (x,) in loader:
{use}
        loss = nn.functional.binary_cross_entropy_with_logits(critic.net(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("handed", "use", "sizes"),
    [
        ("4", "        bs = BATCH_SIZE\n        target = torch.ones(bs, 1)", True),  # a local alias
        ("4", "        target = make_targets(BATCH_SIZE)", True),  # a function of the script handed it
        ("BATCH_SIZE", "        target = critic.targets()", True),  # stored on self by the class it is handed to
        ("4", "        bs = BATCH_SIZE\n        target = torch.ones(x.size(0), 1) * bs", False),  # a factor, not a size
        ("4", "        target = make_targets(x.size(0))", False),  # the real batch length
    ],
)
def test_a_batch_size_carried_by_another_name_that_sizes_a_tensor(handed: str, use: str, sizes: bool) -> None:
    """Issue 20, class 11: the batch size reaches the tensor through a local alias, a helper's
    parameter or an attribute of the class it is handed to; splitting the global batch would
    make the targets twice the batch's length, so the loader keeps the per-process batch."""
    result = convert_source(_CARRIED.format(handed=handed, use=use))
    assert ("per_process_batch=True" in result.output) is sizes
