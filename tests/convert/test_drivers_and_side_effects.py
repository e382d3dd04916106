"""Edges of the driver-file conversion and of the side-effect helper reports that the goldens do
not show: what keeps a file byte-identical, and what is never reported."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source


def convert(source: str):
    return convert_source(textwrap.dedent(source))


@pytest.mark.parametrize(
    "hand_over",
    [
        "with torch.no_grad():\n    train_metrics(model)",  # evaluation under no_grad
        "init_weights(model)",  # not named like a trainer
        "if rank == 0:\n    Trainer(model).run()",  # behind a rank test
        "Trainer(config).run()",  # no model given
        "Trainer(torch.randn(2).to('cpu')).run()",  # a tensor, not a model
    ],
)
def test_no_hand_over_to_a_trainer_keeps_the_file_identical(hand_over: str) -> None:
    source = (
        "import torch\nfrom utils import Trainer, init_weights, train_metrics\n\nmodel = torch.nn.Linear(2, 1)\nconfig = {}\nrank = 0\n"
    )
    source += hand_over + "\nprint('done')\n"
    result = convert_source(source)
    assert result.output == source and not result.changes and not result.manual


def test_a_project_class_result_used_as_a_module_is_a_model() -> None:
    result = convert(
        """\
        import torch
        from models import GPT
        from trainer import Trainer

        model = GPT()
        model.train()
        Trainer(model).run()
        print("done")
        """
    )
    [item] = result.manual
    assert item.line == 7 and item.why.startswith("Trainer() (trainer, another file) is given model, built here")
    assert "ddpify.setup()" in result.output and "ddpify.print(" in result.output


def test_no_driver_item_in_a_file_that_trains() -> None:
    """A frozen teacher given to distillation code of another file, the student trained here:
    the driver item would be wrong (the teacher is not trained there)."""
    result = convert(
        """\
        import torch
        from distill import distill_train

        student = torch.nn.Linear(2, 1)
        teacher = torch.nn.Linear(2, 1)
        teacher.eval()
        optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
        distill_train(student, teacher, optimizer)
        """
    )
    assert not any("built here" in m.why for m in result.manual)


def test_side_effect_helpers_of_installed_packages_are_not_reported() -> None:
    """``click`` is installed (not the project's), ``utils`` beside the script is not."""
    result = convert(
        """\
        import click
        import torch
        from utils import make_gif, set_seed

        set_seed(0)
        click.echo("start")
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(1, 2)).sum().backward()
        optimizer.step()
        make_gif("out/")
        make_gif("again/")
        """
    )
    [item] = [m for m in result.manual if "side effects" in m.why]
    assert item.line == 11 and item.why.startswith("make_gif() (another file) is called for its side effects on every rank")
    assert '`if ddpify.is_main_process(): make_gif("out/")`' in item.todo


def test_a_copy_read_back_is_guarded_and_waited_for() -> None:
    """Rank 0 alone copies; every rank reads the copy: they wait for it (a barrier before the
    read, which every rank runs alike)."""
    result = convert(
        """\
        import shutil
        import numpy as np
        import torch

        shutil.copyfile("raw.npy", "train.npy")
        x = torch.from_numpy(np.load("train.npy"))
        model = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(x).sum().backward()
        opt.step()
        """
    )
    assert 'if ddpify.is_main_process():\n    shutil.copyfile("raw.npy", "train.npy")\nddpify.barrier()\nx = torch.from_numpy(np.load("train.npy"))' in result.output
    assert not result.manual
    assert any("before reading \"train.npy\" back (line 6): rank 0 alone writes it" in c.what for c in result.changes)


def test_a_read_back_only_some_ranks_may_run_is_reported() -> None:
    """The read runs under a decision each rank takes by its own clock: a barrier there would hang
    the ranks that skip it, so the read back is reported with the barrier a human can place."""
    result = convert(
        """\
        import shutil
        import time
        import numpy as np
        import torch

        shutil.copyfile("raw.npy", "train.npy")
        if time.time() % 2 < 1:
            x = torch.from_numpy(np.load("train.npy"))
        model = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(x).sum().backward()
        opt.step()
        """
    )
    assert "ddpify.barrier()" not in result.output
    [item] = [m for m in result.manual if "train.npy" in m.why]
    assert item.line == 6 and "read back on every rank at line 8" in item.why and "ddpify.barrier()" in item.todo


def test_helpers_that_load_or_change_training_state_are_not_side_effects() -> None:
    """``read_data(opt)`` fills what every rank trains on; ``adjust_learning_rate(optimizer,
    0.8)`` changes every rank's optimizer: neither may move to rank 0, so neither is reported
    as a side-effect call; ``plot_samples(...)`` still is."""
    result = convert(
        """\
        import torch
        from utils import adjust_learning_rate, read_data, plot_samples

        read_data(opt)
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            model(torch.ones(1, 2)).sum().backward()
            optimizer.step()
            adjust_learning_rate(optimizer, 0.8)
            plot_samples(step)
        """
    )
    reported = [m.why.split("()")[0] for m in result.manual if "side effects" in m.why]
    assert reported == ["plot_samples"]
