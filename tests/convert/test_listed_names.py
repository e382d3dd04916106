"""Issue 20 (unseen20m's kdstudy_distill): a run folder named from what its parent holds
(``exp{len(os.listdir(root)) + 1}``): each rank lists the folder at its own moment, and one that
lists after rank 0 created its folder names another. The name becomes ``ddpify.agreed(...)``,
rank 0's on every rank. Spellings: ``len(os.listdir(...))``, ``max(glob.glob(...))``,
``sorted(os.listdir(...))[-1]``, ``len(glob.glob(...))`` in a path join, and a listing kept in a
name (or a comprehension over it) that a later assignment counts from. Left alone: a list of
data files, a listing in the training loop (a collective per step), one behind a rank test."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import glob
import os

import torch

{setup}
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range({steps}):
{inside}    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
torch.save(model.state_dict(), os.path.join(run_dir, "last.pth"))
"""

_AGREED = {
    "len(os.listdir)": 'run_dir = os.path.join("runs", f"exp{len(os.listdir(\'runs\')) + 1}")',
    "max(glob.glob)": 'run_dir = max(glob.glob("runs/*"), default="runs/exp0")',
    "sorted(os.listdir)[-1]": 'run_dir = os.path.join("runs", sorted(os.listdir("runs"))[-1])',
    "len(glob.glob) joined": 'run_dir = "runs/run_" + str(len(glob.glob("runs/run_*")))',
}
# the listing kept in a name that a later assignment reduces: the listing itself is rank 0's
_KEPT = {
    "len of a kept glob": ('versions = glob.glob("runs/version_*")\nrun_dir = f"runs/version_{len(versions)}"', "versions"),
    "max of a comprehension": (
        'ids = [int(p.split("_")[-1]) for p in os.listdir("runs") if p.startswith("v_")]\nrun_dir = f"runs/v_{max(ids, default=-1) + 1}"',
        "ids",
    ),
    "max over a generator of a sorted listing": (
        'names = sorted(os.listdir("runs"))\nrun_dir = f"runs/{max((int(n) for n in names), default=0) + 1}"',
        "names",
    ),
    "last of a sorted kept list": ('runs = list(glob.glob("runs/*"))\nrun_dir = sorted(runs)[-1]', "runs"),
}
_LEFT = {
    "a list of data files": 'run_dir = "runs"\nfiles = sorted(glob.glob("data/*.npy"))',
    "a kept list of data files only iterated": 'run_dir = "runs"\nfiles = glob.glob("data/*.npy")\nfor f in files:\n    print(f)',
    "behind a rank test": 'run_dir = "runs"\nif int(os.environ.get("RANK", 0)) == 0:\n    last = len(os.listdir("runs"))',
}


@pytest.mark.parametrize("setup", _AGREED.values(), ids=_AGREED.keys())
def test_a_name_counted_from_a_folder_is_rank_zeros_on_every_rank(setup: str) -> None:
    result = convert_source(_SCRIPT.format(setup=setup, steps=3, inside=""))
    line = next(line for line in result.output.splitlines() if line.startswith("run_dir = "))
    assert line.startswith("run_dir = ddpify.agreed("), line
    assert any("is named from what the folder holds" in c.what for c in result.changes)


@pytest.mark.parametrize("case", _KEPT.values(), ids=_KEPT.keys())
def test_a_kept_listing_a_name_is_counted_from_is_rank_zeros_on_every_rank(case: tuple[str, str]) -> None:
    setup, name = case
    result = convert_source(_SCRIPT.format(setup=setup, steps=3, inside=""))
    line = next(line for line in result.output.splitlines() if line.startswith(f"{name} = "))
    assert line.startswith(f"{name} = ddpify.agreed("), line
    assert any("lists the folder a name is counted from" in c.what for c in result.changes)
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize("setup", _LEFT.values(), ids=_LEFT.keys())
def test_other_listings_are_left_alone(setup: str) -> None:
    assert "ddpify.agreed(" not in convert_source(_SCRIPT.format(setup=setup, steps=3, inside="")).output


def test_a_listing_in_the_training_loop_is_left_alone() -> None:
    inside = '    newest = len(os.listdir("runs"))\n'
    assert "ddpify.agreed(" not in convert_source(_SCRIPT.format(setup='run_dir = "runs"', steps=3, inside=inside)).output
