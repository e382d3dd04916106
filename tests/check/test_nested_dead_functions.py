"""Issue 21: a function defined inside another and never named again (glue-factory's
``trace_handler``, written for a profiler that is handed another handler) never runs: its
prints are no finding. One that is handed on (``on_trace_ready=trace_handler``), called, or
decorated (a registration) runs, and its every-rank print is reported."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch.distributed as dist


def training(rank):
    dist.init_process_group("gloo")

    {decorator}def trace_handler(p):
        print(p.key_averages())

    {use}
"""


@pytest.mark.parametrize(
    ("decorator", "use", "reported"),
    [
        ("", "profile(on_trace_ready=None)", False),
        ("", "profile(on_trace_ready=trace_handler)", True),
        ("", "trace_handler(None)", True),
        ("@register\n    ", "profile(on_trace_ready=None)", True),
    ],
    ids=["never-named", "handed-on", "called", "decorated"],
)
def test_a_nested_function_nothing_names_never_runs(decorator: str, use: str, reported: bool) -> None:
    text = _SCRIPT.format(decorator=decorator, use=use)
    found = check_source(text, "train.py", rules=select_rules(["DDP012"])).findings
    assert bool(found) is reported, (text, found)
