"""Objects of the project's own classes used by the script (GAN_stability's ``CheckpointIO``):
a ``save`` method whose code is read and writes a file runs on rank 0 only, like a project
``save_checkpoint`` function; building the object saves nothing and is left alone; a method that
also runs a collective stays on every rank. And a training loop that ends the process on a
decision the ranks may take differently (``if time.time() - t0 > budget: exit(3)``) is reported:
the other ranks would wait in the next all-reduce."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddpify.api import convert_source

_CHECKPOINTS = """\
import os

import torch
import torch.distributed as dist


class CheckpointIO:
    def __init__(self, checkpoint_dir):
        self.checkpoint_dir = checkpoint_dir
        self.modules = {}

    def register_modules(self, **modules):
        self.modules.update(modules)

    def save(self, filename, **extra):
        state = {k: v.state_dict() for k, v in self.modules.items()}
        torch.save({**state, **extra}, os.path.join(self.checkpoint_dir, filename))

    def save_synced(self, filename):
        dist.barrier()
        torch.save({k: v.state_dict() for k, v in self.modules.items()}, filename)

    def load(self, filename):
        return torch.load(os.path.join(self.checkpoint_dir, filename))
"""

_SCRIPT = """\
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from checkpoints import CheckpointIO

loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
checkpoint_io = CheckpointIO(checkpoint_dir=".")
checkpoint_io.register_modules(model=model)
t0 = time.time()
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        {inside}
    {after}
"""


def _convert(tmp_path: Path, inside: str = "pass", after: str = "pass"):
    (tmp_path / "checkpoints.py").write_text(_CHECKPOINTS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(inside=inside, after=after), encoding="utf-8")
    return convert_source(script.read_text(encoding="utf-8"), filename=str(script))


def test_a_saving_method_of_a_project_object_runs_on_rank_zero(tmp_path: Path) -> None:
    result = _convert(tmp_path, after='checkpoint_io.save("model.pt", epoch=epoch)')
    assert '    if ddpify.is_main_process():\n        checkpoint_io.save("model.pt", epoch=epoch)' in result.output
    assert "checkpoint_io = CheckpointIO(checkpoint_dir=\".\")" in result.output  # built on every rank
    assert not any("CheckpointIO()" in m.why for m in result.manual), result.manual


@pytest.mark.parametrize("call", ['checkpoint_io.save_synced("model.pt")', 'checkpoint_io.load("model.pt")'])
def test_a_method_that_syncs_or_loads_stays_on_every_rank(tmp_path: Path, call: str) -> None:
    result = _convert(tmp_path, after=call)
    assert f"    {call}" in result.output and "is_main_process():\n        checkpoint_io" not in result.output


@pytest.mark.parametrize("exit_call", ["exit(3)", "sys.exit(3)", "quit()"])
def test_an_exit_on_the_clock_inside_the_training_loop_is_taken_by_every_rank(tmp_path: Path, exit_call: str) -> None:
    """Each rank reads its own clock: one that exits alone leaves the others in the next
    all-reduce. Every rank exits once one would (``ddpify.any_rank``)."""
    inside = f"if time.time() - t0 > 600:\n            import sys\n\n            {exit_call}"
    result = _convert(tmp_path, inside=inside)
    assert "if ddpify.any_rank(time.time() - t0 > 600):" in result.output
    assert any("ends the process on all ranks as soon as one" in c.what and "time.time() reads the clock" in c.what for c in result.changes)
    assert not any("time.time()" in m.why for m in result.manual), result.manual


def test_an_exit_after_training_is_no_divergence(tmp_path: Path) -> None:
    result = convert_source(
        textwrap.dedent(_SCRIPT.format(inside="pass", after="pass").replace("from checkpoints import CheckpointIO\n", "")
                        .replace('checkpoint_io = CheckpointIO(checkpoint_dir=".")\ncheckpoint_io.register_modules(model=model)\n', ""))
        + "if time.time() - t0 > 600:\n    exit(3)\n"
    )
    assert not any("ends the process" in m.why for m in result.manual)
