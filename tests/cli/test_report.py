"""The report never names a file that was not written, and ``--annotate`` comments, which live
in the output, cite no input line numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# batch_size is also the length of a batch (line 10): the report cites that input line.
GAN_LIKE = """\
import torch
from torch.utils.data import DataLoader

batch_size = 8
loader = DataLoader(list(range(64)), batch_size=batch_size, shuffle=True)
model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for batch in loader:
        labels = torch.ones(batch_size, 1)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(batch.float().unsqueeze(1)), labels).backward()
        optimizer.step()
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(GAN_LIKE)
    return path


def test_diff_report_says_nothing_is_written_and_names_the_input(cli, script: Path) -> None:
    result = cli("train.py", "--diff", cwd=script.parent)
    assert result.returncode == 0
    report = result.stderr
    assert "ddpify: train.py (--diff: nothing written):" in report
    assert "launch, after writing it with `ddpify train.py -o train_ddp.py` (--diff wrote nothing):" in report
    assert "->" not in report.splitlines()[0]
    assert sorted(p.name for p in script.parent.iterdir()) == ["train.py"]


def test_stdout_report_tells_how_to_write_the_file(cli, script: Path) -> None:
    result = cli("train.py", cwd=script.parent)
    assert "ddpify: train.py -> <stdout>:" in result.stderr
    assert "launch, after writing it with `ddpify train.py -o train_ddp.py`:" in result.stderr


def test_written_file_is_the_one_launched(cli, script: Path) -> None:
    result = cli("train.py", "-o", "job.py", cwd=script.parent)
    assert "launch:\n  torchrun --standalone --nproc_per_node=NUM_GPUS job.py ARGS..." in result.stderr


def test_annotations_cite_no_input_line_numbers(cli, script: Path) -> None:
    report = cli("train.py", "-o", "out.py", cwd=script.parent).stderr
    assert "is also used at line 10, where it may stand for the length of every batch" in report  # the report keeps it
    output = (script.parent / "out.py").read_text()
    assert cli("train.py", "--annotate", "-o", "out.py", "-q", cwd=script.parent).returncode == 0
    annotated = (script.parent / "out.py").read_text()
    comments = [line for line in annotated.splitlines() if line.lstrip().startswith("# ddpify:")]
    assert comments and "batch_size is also used, where it may stand for the length of every batch" in comments[0]
    assert not any(re.search(r"\bline \d+|\bL\d+\b", comment) for comment in comments), comments
    assert annotated.replace(comments[0] + "\n", "") == output  # only the comment is added
    again = cli("out.py", "--annotate", "-q", cwd=script.parent)
    assert again.stdout == annotated  # converting again adds no second comment


def test_converted_script_is_reported_as_already_converted(cli, tmp_path: Path) -> None:
    """Converting a converted script again changes nothing; the report says why (it was done
    before) and names the tools for a converted script, not "no training code"."""
    (tmp_path / "train.py").write_text(GAN_LIKE)
    assert cli("train.py", "-o", "train_ddp.py", cwd=tmp_path).returncode == 0
    again = cli("train_ddp.py", "-o", "again.py", cwd=tmp_path)
    assert again.returncode == 0
    assert (tmp_path / "again.py").read_text() == (tmp_path / "train_ddp.py").read_text()
    first = again.stderr.splitlines()[0]
    assert "already converted" in first and "no training code" not in again.stderr
    assert "`ddpify check train_ddp.py`" in first and "`ddpify verify train_ddp.py`" in first


def test_script_without_training_code_still_says_so(cli, tmp_path: Path) -> None:
    (tmp_path / "prep.py").write_text("import torch\nprint(torch.zeros(2))\n")
    result = cli("prep.py", "-o", "out.py", cwd=tmp_path)
    assert "no training code in this file" in result.stderr and "other modules" in result.stderr and "already converted" not in result.stderr


def test_a_script_that_loads_its_model_module_by_name_says_so(cli, tmp_path: Path) -> None:
    """GradientEpisodicMemory's main.py: the loop is here, the step is ``model.observe`` of a
    module ``importlib.import_module('model.' + args.model)`` loads; "convert the file that
    holds the training loop" would name this very file."""
    script = tmp_path / "main.py"
    script.write_text(
        "import importlib\n\n\ndef main(args, data):\n    Model = importlib.import_module('model.' + args.model)\n"
        "    model = Model.Net(args)\n    for x, t, y in data:\n        model.observe(x, t, y)\n"
    )
    result = cli(str(script), "-o", str(tmp_path / "main_ddp.py"))
    assert result.returncode == 0, result.stderr
    assert "it loads code by name at line 5 (importlib.import_module)" in result.stderr
    assert "convert the file that holds the training loop" not in result.stderr


def test_cite_maps_every_line_reference_to_its_cell() -> None:
    from ddpify.report import cite

    def locate(line: int) -> str:
        return f"cell_{line // 10}:{line % 10}"

    assert cite("its loop at line 25 and lines 3, 14 and 31 (line 7)", locate) == (
        "its loop at cell_2:5 and cell_0:3, cell_1:4 and cell_3:1 (cell_0:7)"
    )
    assert cite("no baseline 5 here", locate) == "no baseline 5 here"
