"""A DDP model's forward in code only rank 0 runs once converted goes to the plain module
(``ddpify.unwrap(model)(...)``): through the wrapper it is a collective (a buffer broadcast)
rank 0 would wait in for ever (unseen20r's ctgan, under ``if vis:`` of a visdom client the
conversion makes rank 0's). Spellings: a ``SummaryWriter`` or ``visdom.Visdom`` tested for
truth, alone or in an ``and``; a rank test. Left alone: ``writer is not None`` (true on every
rank: the no-op object is not None), a region that also trains (a backward), a forward outside."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import os

import torch
import torch.nn as nn
import visdom
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

gen = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 4))
opt = torch.optim.Adam(gen.parameters())
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, shuffle=True)
writer = SummaryWriter("runs")
vis = visdom.Visdom()
plot = True
fixed = torch.randn(8, 4)
for epoch in range(2):
    for x, in loader:
        opt.zero_grad()
        gen(x).pow(2).mean().backward()
        opt.step()
    if {test}:
        samples = gen(fixed).detach(){extra}
        writer.add_histogram("samples", samples, epoch)
"""

UNWRAPPED = {
    "a writer's truth": "writer",
    "a visdom client's truth": "vis",
    "in an and": "plot and writer",
    "a rank test": 'int(os.environ.get("RANK", 0)) == 0',
}
LEFT = {
    "is not None holds everywhere": ("writer is not None", ""),
    "the region trains": ("writer", "\n        samples.requires_grad_().sum().backward()"),
    "an ordinary test": ("epoch % 2 == 0", ""),
}


@pytest.mark.parametrize("test", UNWRAPPED.values(), ids=UNWRAPPED.keys())
def test_a_forward_only_rank_zero_runs_uses_the_plain_module(test: str) -> None:
    result = convert_source(_SCRIPT.format(test=test, extra=""))
    assert "samples = ddpify.unwrap(gen)(fixed).detach()" in result.output, result.output
    assert any("runs on rank 0 only" in c.what and "ddpify.unwrap(gen)" in c.what for c in result.changes), result.changes
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize("case", LEFT.values(), ids=LEFT.keys())
def test_other_forwards_stay_through_the_wrapper(case: tuple[str, str]) -> None:
    test, extra = case
    result = convert_source(_SCRIPT.format(test=test, extra=extra))
    assert "samples = gen(fixed).detach()" in result.output, result.output
