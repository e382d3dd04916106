"""A parameter defaulting to None that two wrapper classes pass on to each other's method of
the same name (``self.inner.log(message, writer=writer)`` in both): where it holds an object is
asked of the callers, which ask it back; the question ends (unknown) instead of recursing until
Python's stack runs out (a held-out file of ddp21g crashed ``ddpify check`` with RecursionError)."""

from __future__ import annotations

from ddpify.api import convert_source
from ddpify.check.engine import check_source

_WRAPPERS = """\
import torch.distributed as dist


class Wrapper:
    def __init__(self, inner):
        self.inner = inner

    def log(self, message, writer=None):
        if writer:
            writer.add_text("log", message)
        return self.inner.log(message, writer)


class Inner:
    def __init__(self, inner):
        self.inner = inner

    def log(self, message, writer=None):
        if writer:
            writer.add_text("inner", message)
        return self.inner.log(message, writer=writer)


def main(rank):
    dist.init_process_group("gloo")
    w = Wrapper(Inner(None))
    w.log("hi", writer=object() if rank == 0 else None)
    w.log("again")
"""


def test_a_parameter_passed_back_and_forth_between_two_wrappers_is_unknown() -> None:
    result = check_source(_WRAPPERS, "wrappers.py")  # the default rules ask whether `writer` is present
    assert result.distributed
    convert_source(_WRAPPERS.replace("dist.init_process_group(\"gloo\")", "pass"))


def test_many_wrappers_passing_the_parameter_on_cost_linear_work(monkeypatch) -> None:
    """Adversarial shape: a hundred classes whose same-named ``log`` methods pass ``writer`` on
    to each other. Where ``writer`` holds an object is asked of each method's callers; the
    questions asked stay proportional to the classes (each parameter once per top-level
    question, cut where it comes back), not to the paths between them."""
    from ddpify.analysis.presence import Presence

    asked: list[object] = []
    real = Presence._passed_to
    monkeypatch.setattr(Presence, "_passed_to", lambda self, *args: asked.append(args[0]) or real(self, *args))
    classes = "".join(
        f"class W{i}:\n    def __init__(self, inner):\n        self.inner = inner\n\n"
        f"    def log(self, message, writer=None):\n        if writer:\n            writer.add_text('x', message)\n"
        "        return self.inner.log(message, writer=writer)\n\n\n"
        for i in range(100)
    )
    text = "import torch.distributed as dist\n\n\n" + classes + "def main(rank):\n    dist.init_process_group('gloo')\n    W0(W1(None)).log('hi')\n"
    check_source(text, "wrappers.py")
    assert len(asked) <= 100, len(asked)
