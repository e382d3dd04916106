"""``ddpify.analysis.loops``: epoch loops and the loaders a loop iterates."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tests.analysis.conftest import analyse


def _loops(source: str) -> tuple[object, list[cst.For]]:
    analysis = analyse("from tqdm import tqdm, trange\n" + textwrap.dedent(source))
    return analysis, [f for f in analysis.source.of_types(cst.For) if isinstance(f, cst.For)]


@pytest.mark.parametrize(
    "header, epoch",
    [
        ("for epoch in range(10):", True),
        ("for ep in range(3):", True),
        ("for e in range(3):", True),
        ("for epoch_idx in range(3):", True),
        ("for t in range(args.epochs):", True),
        ("for i in range(start_epoch, args.num_epochs):", True),
        ("for t in range(NUM_EPOCHS):", True),
        ("for i in trange(cfg.max_epochs):", True),
        ("for epoch in trange(10):", True),
        ("for step in range(max_steps):", False),
        ("for i in range(steps_per_epoch):", False),
        ("for i in range(epoch_len):", False),
        ("for batch in loader:", False),
        ("for i, epoch in enumerate(epochs):", False),
        ("for t in some_range(args.epochs):", False),
        # the examples or batches of one epoch (hlb-CIFAR10's batch generator)
        ("for idx in range(num_epoch_examples // batchsize):", False),
        ("for i in range(epoch_samples // bs):", False),
        ("for i in range(n_epochs * batch_size):", False),
    ],
)
def test_epoch_loops(header: str, epoch: bool) -> None:
    analysis, loops = _loops(f"{header}\n    pass\n")
    assert analysis.loops.is_epoch_loop(loops[0]) is epoch  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "source, epoch",
    [
        # a generator's loop makes one epoch's batches, whatever its counter is called
        ("def batches(data, bs):\n    for epoch in range(n_epochs):\n        yield data[epoch * bs:(epoch + 1) * bs]\n", False),
        # an epoch loop around a generator's batch loop still counts epochs
        ("def batches(data):\n    for epoch in range(n_epochs):\n        for x in data:\n            yield x\n", True),
        ("def batches(data):\n    for epoch in range(n_epochs):\n        yield from (x for x in data)\n", True),
    ],
)
def test_a_loop_that_yields_batches_is_no_epoch_loop(source: str, epoch: bool) -> None:
    analysis, loops = _loops(source)
    assert analysis.loops.is_epoch_loop(loops[0]) is epoch  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body, loaders",
    [
        ("for x, y in train_loader:\n        pass", ["train_loader"]),
        ("for i, (x, y) in enumerate(train_loader):\n        pass", ["train_loader"]),
        ("for i, batch in enumerate(tqdm(train_loader, desc='train'), 1):\n        pass", ["train_loader"]),
        ("for a, b in zip(loader_a, loader_b):\n        pass", ["loader_a", "loader_b"]),
        ("it = iter(train_loader)\n    x = next(it)", ["train_loader"]),
        ("xs = [step(b) for b in self.train_loader]", ["self.train_loader"]),
        ("train(model, train_loader, optimizer)", ["train_loader"]),
        ("train(model, loader=val_loader, optimizer=opt)", ["val_loader"]),
        ("run_global()", ["loader"]),
        ("trainer.fit()", ["trainer.loader"]),
        ("self.fit()", ["self.loader"]),
        ("evaluate(model)", []),
    ],
)
def test_iterated_loaders(body: str, loaders: list[str]) -> None:
    template = """\
    def train(model, loader, optimizer):
        for x, y in tqdm(loader):
            pass

    def run_global():
        for x in loader:
            pass

    def evaluate(model):
        return model

    class Trainer:
        def fit(self):
            for batch in self.loader:
                pass

    for epoch in range(3):
        BODY
    """
    analysis, loops = _loops(textwrap.dedent(template).replace("BODY", body))
    assert analysis.loops.iterated(loops[-1]) == loaders  # type: ignore[attr-defined]


def test_the_loop_that_iterates_train_loader_not_loader() -> None:
    """Two loaders, ``loader`` and ``train_loader``: the loop iterates only the second."""
    source = """\
    loader = DataLoader(eval_set)
    train_loader = DataLoader(train_set, sampler=sampler)
    for epoch in range(args.epochs):
        for x, y in train_loader:
            pass
    """
    analysis, loops = _loops(source)
    assert analysis.loops.iterated(loops[0]) == ["train_loader"]  # type: ignore[attr-defined]


def test_handed_out_and_called_functions() -> None:
    source = """\
    import engine

    def log(x):
        helper(x)

    def helper(x):
        pass

    for epoch in range(3):
        engine.train_one_epoch(model, train_loader, len(train_loader))
        log(epoch)
        print(val_loader)
    """
    analysis, loops = _loops(source)
    loop = loops[0]
    assert analysis.loops.handed_out(loop) == ["model", "train_loader"]  # type: ignore[attr-defined]
    assert [f.name.value for f in analysis.loops.called_functions(loop)] == ["log", "helper"]  # type: ignore[attr-defined]


def test_recursive_functions_terminate() -> None:
    source = """\
    def a(loader):
        for x in loader:
            b(loader)

    def b(loader):
        a(loader)

    for epoch in range(3):
        a(train_loader)
    """
    analysis, loops = _loops(source)
    assert analysis.loops.iterated(loops[-1]) == ["train_loader"]  # type: ignore[attr-defined]
