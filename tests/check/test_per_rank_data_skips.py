"""Issue 21: a training step that a rank skips on a decision from its own batch hangs DDP
(maskrcnn-benchmark's ``if any(len(target) < 1 for target in targets): continue`` before the
forward, backward and ``dist.reduce`` of its trainer): the other ranks wait in the gradient
all-reduce. DDP027 reports the ``if``. Spellings: an early ``continue`` on the targets, on a NaN
loss, a guard around the backward, in an engine function handed its loader, a GNN batch mask.
Not reported: a decision every rank takes alike (a batch's size, a step counter, a flag
all-reduced first), an exit by raising, an evaluation loop."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("gloo")
model = DDP(net)
loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
for epoch in range(3):
    for step, (images, targets) in enumerate(loader):
{body}
"""

_ENGINE = """\
import torch
import torch.distributed as dist


def do_train(model, data_loader, optimizer):
    for iteration, (images, targets, _) in enumerate(data_loader):
        if any(len(target) < 1 for target in targets):
            continue
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
"""


def _findings(text: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in check_source(text, rules=select_rules(["DDP027"])).findings]


def _indent(body: str) -> str:
    return "\n".join("        " + line for line in body.splitlines())


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (
            "if any(len(t) < 1 for t in targets):\n    continue\nloss = model(images, targets).sum()\nloss.backward()\noptimizer.step()",
            11,
        ),
        ("loss = model(images, targets).sum()\nif torch.isnan(loss):\n    continue\nloss.backward()\noptimizer.step()", 12),
        ("loss = model(images, targets).sum()\nif loss.item() < 10.0:\n    loss.backward()\n    optimizer.step()", 12),
        (
            "if hasattr(images, 'train_mask') and images.train_mask.sum().item() == 0:\n    continue\nmodel(images).sum().backward()",
            11,
        ),
    ],
)
def test_a_step_skipped_on_this_ranks_data_is_reported(body: str, line: int) -> None:
    assert _findings(_SCRIPT.format(body=_indent(body))) == [("DDP027", line)]


def test_an_engine_function_handed_its_loader() -> None:
    assert _findings(_ENGINE) == [("DDP027", 7)]


@pytest.mark.parametrize(
    "body",
    [
        "if images.size(0) < 8:\n    continue  # every rank's shard has the same length\nmodel(images).sum().backward()",
        "if step % 10 == 9:\n    continue\nmodel(images).sum().backward()",
        "loss = model(images).sum()\nif not torch.isfinite(loss):\n    raise FloatingPointError('nan')\nloss.backward()",
        (
            "loss = model(images).sum()\nbad = torch.tensor(float(torch.isnan(loss)))\ndist.all_reduce(bad)\n"
            "if bad.item() > 0:\n    continue  # agreed on every rank\nloss.backward()"
        ),
        "with torch.no_grad():\n    if len(targets) == 0:\n        continue\n    print(model(images).sum())",
    ],
)
def test_a_decision_every_rank_takes_alike_is_not_reported(body: str) -> None:
    assert _findings(_SCRIPT.format(body=_indent(body))) == []
