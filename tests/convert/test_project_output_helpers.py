"""Issue 20, class 9: a function or object method of the project's own modules that writes
files or images and does nothing the ranks share, called as a statement, runs on rank 0 only,
given the trained model unwrapped. Spellings: ``from viz import plot_samples``, ``viz.plot``,
a method of a project object (``board.log_images(...)``); a call whose result is used, a
helper that trains or leaves what it is given changed (a model in eval mode), stays on every
rank; one that writes a cache the others read runs on rank 0 first instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_VIZ = """\
import torch


def plot_samples(model, noise, path):
    with torch.no_grad():
        torch.save(model(noise), path)
    return path


def train_more(model, x):
    model(x).sum().backward()
    open("log.txt", "a").write("step")


def plot_in_eval(model, noise, path):
    model.eval()
    torch.save(model(noise), path)


def plot_and_restore(model, noise, path):
    model.eval()
    torch.save(model(noise), path)
    model.train()


def build_cache(path):
    import os
    import pickle

    if not os.path.exists(path):
        pickle.dump([1, 2], open(path, "wb"))


class Board:
    def __init__(self, folder):
        self.folder = folder

    def log_images(self, model, noise):
        with torch.no_grad():
            torch.save(model(noise), self.folder + "/images.pt")
"""

_TRAIN = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

{imports}

loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 16)), batch_size=8, shuffle=True)
model = torch.nn.Linear(8, 16)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
noise = torch.randn(4, 8)
{setup}
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    {call}
"""

CASES = {
    "imported_function": ("from viz import plot_samples", "", 'plot_samples(model, noise, "s.pt")', True),
    "module_attribute": ("import viz", "", 'viz.plot_samples(model, noise, "s.pt")', True),
    "project_object_method": ("from viz import Board", 'board = Board("out")', "board.log_images(model, noise)", True),
    "result_used": ("from viz import plot_samples", "", 'path = plot_samples(model, noise, "s.pt")', False),
    "helper_trains": ("from viz import train_more", "", "train_more(model, noise)", False),
    "leaves_the_model_in_eval_mode": ("from viz import plot_in_eval", "", 'plot_in_eval(model, noise, "s.pt")', False),
    "restores_train_mode": ("from viz import plot_and_restore", "", 'plot_and_restore(model, noise, "s.pt")', True),
}


def test_a_cache_the_other_ranks_read_is_written_first_on_rank_zero(tmp_path: Path) -> None:
    """``build_cache(path)`` tests for its file and writes it: the other ranks read it later,
    so it runs on rank 0 first (``main_process_first``), not on rank 0 alone."""
    (tmp_path / "viz.py").write_text(_VIZ)
    script = tmp_path / "train.py"
    text = _TRAIN.format(imports="from viz import build_cache", setup='build_cache("vocab.pkl")', call="pass")
    script.write_text(text)
    output = convert_source(text, filename=str(script)).output
    assert 'with ddpify.main_process_first():\n    build_cache("vocab.pkl")' in output, output


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_projects_output_helpers_run_on_rank_zero(tmp_path: Path, name: str) -> None:
    imports, setup, call, guarded = CASES[name]
    (tmp_path / "viz.py").write_text(_VIZ)
    script = tmp_path / "train.py"
    text = _TRAIN.format(imports=imports, setup=setup, call=call)
    script.write_text(text)
    output = convert_source(text, filename=str(script)).output
    line = next(line for line in output.splitlines() if "noise" in line and "(" in line and "randn" not in line)
    assert ("if ddpify.is_main_process():" in output) is guarded, output
    assert ("ddpify.unwrap(model)" in line) is guarded, output
