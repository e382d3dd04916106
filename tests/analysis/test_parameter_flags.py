"""A parameter every call of its function passes a rank test (``pbar=(rank == 0)``) is a rank
flag where the function reads it; a call that leaves it at its default, passes it through
``**kwargs``, or a function that rebinds it, leaves it unknown; a function passing its own
parameter on to itself ends."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddpify.analysis import Analysis
from ddpify.analysis.ranks import MAIN, REST
from ddpify.tree.metadata import FastMetadata

_CASES = {
    "every_call_passes_a_rank_test": ("show(x, pbar=(rank == 0))\nshow(y, rank == 0)", "", True),
    "one_call_left_at_the_default": ("show(x, pbar=(rank == 0))\nshow(y)", "", False),
    "passed_through_kwargs": ("show(x, **options)", "", False),
    "rebound_inside": ("show(x, pbar=(rank == 0))", "    pbar = True\n", False),
    "passed_on_to_itself": ("show(x, pbar=(rank == 0))", "    if x:\n        show(x - 1, pbar=pbar)\n", True),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_a_parameter_is_the_rank_test_its_calls_pass(name: str) -> None:
    calls, body, flag = _CASES[name]
    text = "import torch.distributed as dist\nrank = dist.get_rank()\n\n\ndef show(x, pbar=True):\n" + body
    text += "    quiet = not pbar\n\n\n" + textwrap.dedent(calls) + "\n"
    analysis = Analysis(FastMetadata(cst.parse_module(text)))
    read = next(n for n in analysis.source.of_types(cst.UnaryOperation))
    ranks = analysis.rank_tests.ranks(read)
    assert (bool(ranks.must & REST) and not ranks.may & MAIN) is flag, ranks
