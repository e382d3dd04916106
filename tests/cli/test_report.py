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
