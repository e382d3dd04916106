"""Issue 20 (unseen20h's StyleGAN.pytorch): where a wrap goes and what it needs.

- A method of the model's class that hands the model to other code (``self.loss =
  self.__setup_loss(loss)`` building ``LogisticGAN(self.dis)``) is a hand-off: the wrap comes
  before it, so the loss object runs the DDP model (built with the plain module, it would run
  the discriminator around DDP).
- A forward that runs a module list at an index or slice chosen at run time (a progressive
  GAN's ``self.blocks[self.depth - depth:]``), also in a submodule class of this file, leaves
  some parameters without a gradient in a step: ``find_unused_parameters=True``. A literal
  index (``self.from_rgb[0]``, ``[-1]``) or a loop over the whole list is a full use."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_HANDED_THROUGH_A_METHOD = """\
import torch
import torch.nn as nn


class LogisticGAN:
    def __init__(self, dis):
        self.dis = dis

    def dis_loss(self, real, fake):
        return self.dis(fake).mean() - self.dis(real).mean()


class GAN:
    def __init__(self, loss):
        self.dis = nn.Linear(4, 1)
        self.__setup_dis_optim()
        self.drift = 0.001
        self.loss = self.__setup_loss(loss)
        self.steps = 0

    def __setup_dis_optim(self):
        self.dis_optim = torch.optim.Adam(self.dis.parameters())

    def __setup_loss(self, loss):
        if loss == "logistic":
            return LogisticGAN(self.dis)
        return None

    def train(self, loader):
        for real in loader:
            loss = self.loss.dis_loss(real, torch.randn_like(real))
            self.dis_optim.zero_grad()
            loss.backward()
            self.dis_optim.step()
"""


def test_a_method_that_hands_the_model_on_comes_after_the_wrap() -> None:
    result = convert_source(_HANDED_THROUGH_A_METHOD)
    assert (
        "        self.drift = 0.001\n        self.dis = ddpify.prepare_model(self.dis)\n        self.loss = self.__setup_loss(loss)\n"
        in result.output
    ), result.output


_PROGRESSIVE = """\
import torch
import torch.nn as nn


class Synthesis(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(depth)])
        self.to_rgb = nn.ModuleList([nn.Linear(4, 3) for _ in range(depth)])

    def forward(self, x, depth):
        {body}


class Generator(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.mapping = nn.Linear(4, 4)
        self.synthesis = Synthesis(depth)

    def forward(self, x, depth):
        return self.synthesis(self.mapping(x), depth)


def main(loader):
    model = {model}
    optimizer = torch.optim.Adam(model.parameters())
    for x in loader:
        model(x, 1).mean().backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("body", "unused"),
    [
        ("for block in self.blocks[:depth]:\n            x = block(x)\n        return self.to_rgb[depth - 1](x)", True),
        ("x = self.blocks[self.depth - depth](x)\n        return self.to_rgb[0](x)", True),
        ("for block in self.blocks:\n            x = block(x)\n        return self.to_rgb[-1](x) + self.to_rgb[0](x)", False),
    ],
    ids=["slice-and-index", "computed-index", "whole-and-literal"],
)
@pytest.mark.parametrize("model", ["Synthesis(3)", "Generator(3)"])
def test_module_lists_run_at_a_run_time_index_need_unused_parameters(body: str, unused: bool, model: str) -> None:
    result = convert_source(_PROGRESSIVE.format(body=body, model=model))
    assert ("find_unused_parameters=True" in result.output) is unused, result.output
    if unused:
        assert any("at an index chosen at run time" in c.what for c in result.changes)
