"""``torch.load`` gets ``map_location=ddpify.device()`` also when it has keywords of its own
(``weights_only=False``, common since torch 2.6 made weights_only the default): only a second
positional argument is a map_location already. Found on a fixture of ours: the load was left
as it was, and ``ddpify check`` reported the converted output (DDP004)."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source
from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in torch.randn(3, 8, 4):
    model(x).sum().backward()
    optimizer.step()
model.load_state_dict(torch.load({arguments}))
"""


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('"m.pt", weights_only=False', 'torch.load("m.pt", weights_only=False, map_location=ddpify.device())'),
        ('"m.pt", weights_only=True, mmap=True', 'torch.load("m.pt", weights_only=True, mmap=True, map_location=ddpify.device())'),
        ('"m.pt", "cpu"', 'torch.load("m.pt", "cpu")'),
        ('"m.pt", map_location="cpu", weights_only=False', 'torch.load("m.pt", map_location="cpu", weights_only=False)'),
    ],
)
def test_a_load_with_keywords_gets_the_rank_device(arguments: str, expected: str) -> None:
    output = convert_source(_SCRIPT.format(arguments=arguments)).output
    assert expected in output
    assert not check_source(output, rules=select_rules(["DDP004"])).findings
