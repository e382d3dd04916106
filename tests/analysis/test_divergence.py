"""``ddpify.analysis.divergence`` (through ``Context.divergent_condition`` / ``Context.uniform``):
which decisions every rank takes alike, and which ones ranks may take differently."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tests.analysis.conftest import analyse

PROLOGUE = """\
import random, time
from datetime import datetime
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
val_loader = DataLoader(val_set, batch_size=32)


def train_epoch(model, optimizer):
    total = 0.0
    for i, (x, y) in enumerate(train_loader):
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(train_loader)


@torch.no_grad()
def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def val_batch_loss(model):
    ix = torch.randint(0, 100, (8,))
    return model(val_set[ix]).mean().item()
"""


def _kinds(body: str) -> list[str | None]:
    """The kind of divergent decision above each ``mark()`` in ``main``'s epoch loop."""
    source = PROLOGUE + "\n\ndef main(model, optimizer):\n    best = 0.0\n    start = time.time()\n    for epoch in range(10):\n"
    source += textwrap.indent(textwrap.dedent(body), "        ")
    analysis = analyse(source)
    marks = [c for c in analysis.source.calls_by_callee.get("mark", []) if isinstance(c.func, cst.Name)]
    found = [analysis.context.divergent_condition(c) for c in marks]
    return [d.kind if d is not None else None for d in found]


@pytest.mark.parametrize(
    "body, kind",
    [
        # uniform: constants, counters, arguments, metrics over the whole validation set
        ("if epoch % 5 == 0:\n    mark()", None),
        ("if epoch == 9 or best > 0.5:\n    mark()", None),
        ("acc = evaluate(model, val_loader)\nif acc > best:\n    best = acc\n    mark()", None),
        ("if model.training:\n    mark()", None),
        # the clock
        ("if time.time() - start > 3600:\n    mark()", "clock"),
        ("now = datetime.now()\nif now.hour > 12:\n    mark()", "clock"),
        ("elapsed = time.time() - start\nif elapsed > 60:\n    pass\nelif epoch > 3:\n    mark()", "clock"),
        # random numbers once training runs
        ("train_epoch(model, optimizer)\nif random.random() < 0.1:\n    mark()", "random"),
        ("train_epoch(model, optimizer)\nif np.random.rand() < 0.1:\n    mark()", "random"),
        ("train_epoch(model, optimizer)\nloss = val_batch_loss(model)\nif loss < best:\n    mark()", "random"),
        # per-rank data: a metric of the sharded training loader, through the function's return
        ("loss = train_epoch(model, optimizer)\nif loss < best:\n    mark()", "data"),
        ("loss = train_epoch(model, optimizer)\nhistory = []\nhistory.append(loss)\nif history[-1] < best:\n    mark()", "data"),
        ("acc = evaluate(model, train_loader)\nif acc > best:\n    mark()", "data"),
        # a loss reduced across ranks is the same everywhere again
        ("t = torch.tensor(train_epoch(model, optimizer))\ndist.all_reduce(t)\nif t.item() < best:\n    mark()", None),
        ("loss = reduce_mean(train_epoch(model, optimizer))\nif loss < best:\n    mark()", None),
        # early exits, loops and exception handlers on the way
        ("loss = train_epoch(model, optimizer)\nif loss > 10:\n    continue\nmark()", "data"),
        ("for _ in range(int(time.time()) % 3):\n    mark()", "clock"),
        ("try:\n    train_epoch(model, optimizer)\nexcept RuntimeError:\n    mark()", "exception"),
        ("if dist.get_rank() == 0:\n    mark()", "rank"),
        # the shapes of every rank's batches are alike (samplers pad the shards)
        ("for x, y in train_loader:\n    if x.size(0) != 32 or len(y) < 32 or x.shape[1] > 3:\n        mark()", None),
        # `a, b = f(x), g(y)`: a takes f(x) only
        ("train_epoch(model, optimizer)\nk, noise = epoch * 2, torch.randn(3)\nif k > 4:\n    mark()", None),
        # one function trains and evaluates through the same names: the validation loop's `x, y`
        # are its own items (the whole validation set on every rank), not the training loop's
        (
            "for x, y in train_loader:\n    model(x).sum().backward()\ncorrect = 0\nfor x, y in val_loader:\n"
            "    correct += (model(x).argmax(1) == y).sum().item()\nif correct > best:\n    mark()",
            None,
        ),
        (
            "for x, y in val_loader:\n    correct = (model(x) == y).sum().item()\nfor x, y in train_loader:\n"
            "    model(x).sum().backward()\nif correct > best:\n    mark()",
            None,
        ),
        # reassigned in the validation loop from a training batch: the loop's own items no longer say it all
        (
            "for a, b in train_loader:\n    model(a).sum().backward()\ncorrect = 0\nfor x, y in val_loader:\n"
            "    x = a\n    correct += (model(x) == y).sum().item()\nif correct > best:\n    mark()",
            "data",
        ),
        ("for x, y in train_loader:\n    correct = (model(x) == y).sum().item()\nif correct > best:\n    mark()", "data"),
        # names each pass binds afresh are that loop's (NRI: both loops compute `out`, `loss` and refine
        # their items in place): the validation loop's are the whole validation set's on every rank
        (
            "for x, y in train_loader:\n    x = x.float()\n    out = model(x)\n    loss = (out - y).pow(2).mean()\n    loss.backward()\n"
            "losses = []\nfor x, y in val_loader:\n    x = x.float()\n    out = model(x)\n    loss = (out - y).pow(2).mean()\n"
            "    losses.append(loss.item())\nif np.mean(losses) < best:\n    mark()",
            None,
        ),
        (  # inside a `with` block, the same
            "for x, y in train_loader:\n    out = model(x)\n    out.sum().backward()\nfor x, y in val_loader:\n"
            "    with torch.no_grad():\n        out = model(x)\n    score = out.sum().item()\nif score > best:\n    mark()",
            None,
        ),
        # what the last training pass left in such a name flows on past the loop
        ("for x, y in train_loader:\n    loss = model(x).sum()\n    loss.backward()\nif loss.item() < best:\n    mark()", "data"),
        (  # also out of an inner loop into the loop around it
            "for step in range(3):\n    for x, y in train_loader:\n        part = model(x).sum()\n        part.backward()\n"
            "    last = part.item()\n    if last < best:\n        mark()",
            "data",
        ),
        # a name read before a pass binds it carries the earlier passes' values: not the loop's own
        (
            "total = 0.0\nfor x, y in train_loader:\n    total = total + model(x).sum().item()\nfor x, y in val_loader:\n"
            "    total = total + 1\nif total > best:\n    mark()",
            "data",
        ),
        # np.random.shuffle(order) changes `order` in place
        ("train_epoch(model, optimizer)\norder = np.arange(10)\nnp.random.shuffle(order)\nif order[0] == 3:\n    mark()", "random"),
    ],
)
def test_divergent_decisions(body: str, kind: str | None) -> None:
    assert _kinds(body) == [kind]


def test_the_step_counter_of_a_sharded_loader_is_uniform() -> None:
    """``enumerate(train_loader)``: the batches differ per rank, their count does not."""
    source = PROLOGUE + textwrap.dedent(
        """
        def fit(model, optimizer):
            for i, (x, y) in enumerate(train_loader):
                loss = model(x).sum()
                loss.backward()
                if i % 100 == 0:
                    mark(1)
                if loss.item() < 0.01:
                    mark(2)
        """
    )
    analysis = analyse(source)
    marks = analysis.source.calls_by_callee["mark"]
    first, second = (analysis.context.divergent_condition(m) for m in marks)
    assert first is None
    assert second is not None and second.kind == "data" and second.text == "loss.item() < 0.01"
    assert "train_loader" in second.reason


def test_a_function_called_under_a_divergent_decision_inherits_it() -> None:
    source = PROLOGUE + textwrap.dedent(
        """
        def snapshot(model):
            torch.save(model.state_dict(), "snap.pt")

        def main(model, optimizer):
            start = time.time()
            for epoch in range(3):
                train_epoch(model, optimizer)
                snapshot(model)
                if time.time() - start > 60:
                    snapshot(model)
        """
    )
    analysis = analyse(source)
    save = analysis.source.calls_by_callee["save"][0]
    found = analysis.context.divergent_condition(save)
    assert found is not None and found.kind == "clock" and found.line == analysis.source.line(found.node)


def test_random_numbers_before_training_are_the_same_on_every_rank() -> None:
    """A dataset generated or a threshold drawn before training: every rank draws it with the
    same seed (ddpify seeds ranks apart only once training data flows)."""
    source = PROLOGUE + textwrap.dedent(
        """
        def main(model, optimizer):
            threshold = torch.rand(1).item()
            data = torch.randn(100, 3)
            for epoch in range(3):
                train_epoch(model, optimizer)
                if threshold > 0.5 and data.mean() > 0:
                    mark()
        """
    )
    analysis = analyse(source)
    (mark,) = analysis.source.calls_by_callee["mark"]
    assert analysis.context.divergent_condition(mark) is None


def test_uniform_answers_for_one_expression() -> None:
    source = PROLOGUE + "flag = time.time() > 5\nlimit = 3 * 4\n"
    analysis = analyse(source)
    module = analysis.source.module
    flag, limit = (s.body[0].value for s in module.body[-2:])  # type: ignore[attr-defined]
    assert not analysis.context.uniform(flag)
    assert analysis.context.uniform(limit)


def test_a_project_helper_that_draws_random_numbers_makes_a_validation_metric_per_rank(tmp_path, monkeypatch) -> None:
    """NRI's validation runs ``gumbel_softmax()`` of its utils.py, which draws from torch's RNG:
    once training runs each rank has its own stream, so the validation loss (and a best-model
    decision on it) differs per rank, though every rank reads the whole validation set."""
    from pathlib import Path

    from ddpify.analysis import Analysis, star_imports
    from ddpify.tree.metadata import FastMetadata

    (tmp_path / ".git").mkdir()
    (tmp_path / "utils.py").write_text("import torch\n\n\ndef gumbel(logits):\n    return logits + torch.rand_like(logits)\n")
    body = (
        "for x, y in train_loader:\n    model(x).sum().backward()\nlosses = []\nfor x, y in val_loader:\n"
        "    out = gumbel(model(x))\n    losses.append(out.sum().item())\nif np.mean(losses) < best:\n    mark()"
    )
    source = "from utils import gumbel\n" + PROLOGUE + "\n\ndef main(model, optimizer):\n    best = 0.0\n    for epoch in range(10):\n"
    source += textwrap.indent(body, "        ")
    path = Path(tmp_path / "train.py")
    path.write_text(source)
    monkeypatch.chdir(tmp_path)
    analysis = Analysis(FastMetadata(cst.parse_module(source), star_imports.resolver(str(path))), str(path))
    mark = [c for c in analysis.source.calls_by_callee["mark"] if isinstance(c.func, cst.Name)][0]
    decision = analysis.context.divergent_condition(mark)
    assert decision is not None and decision.kind == "random", decision
