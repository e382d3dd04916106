"""``ddpify a.py b.py --out-dir dist/``: each result written atomically under its own name; a
bad input is reported and exit 2 while the others are still written; ``-o`` with several
inputs is a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

TRAINING = """\
import torch
from torch.utils.data import DataLoader

loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)
model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for batch in loader:
        optimizer.zero_grad()
        model(batch.float().unsqueeze(1)).sum().backward()
        optimizer.step()
"""


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(TRAINING)
    return tmp_path


def test_out_dir_writes_each_result_under_its_name(cli, inputs: Path) -> None:
    result = cli("a.py", "b.py", "--out-dir", "dist/", cwd=inputs)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (inputs / "dist").iterdir()) == ["a.py", "b.py"]  # created, no temporary left
    for name in ("a.py", "b.py"):
        assert "ddpify.distributed_loader(" in (inputs / "dist" / name).read_text()
        assert (inputs / name).read_text() == TRAINING
    assert "a.py -> dist/a.py" in result.stderr and "b.py -> dist/b.py" in result.stderr


def test_a_bad_input_is_exit_2_and_the_others_are_written(cli, inputs: Path) -> None:
    (inputs / "bad.py").write_text("def broken(:\n")
    (inputs / "dist").mkdir()
    (inputs / "dist" / "bad.py").write_text("# an older result\n")
    result = cli("a.py", "bad.py", "missing.py", "b.py", "--out-dir", "dist", "-q", cwd=inputs)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "ddpify: error: bad.py:1:12: syntax error: invalid syntax",
        "ddpify: error: missing.py: no such file",
        "ddpify: error: 2 of 4 inputs not converted (bad.py, missing.py); the other 2 written",
    ]
    assert sorted(p.name for p in (inputs / "dist").iterdir()) == ["a.py", "b.py", "bad.py"]
    assert (inputs / "dist" / "bad.py").read_text() == "# an older result\n"  # a failed input writes nothing
    assert "ddpify.distributed_loader(" in (inputs / "dist" / "b.py").read_text()


def test_in_place_and_diff_take_several_inputs(cli, inputs: Path) -> None:
    diff = cli("a.py", "b.py", "--diff", "-q", cwd=inputs)
    assert diff.returncode == 0 and diff.stdout.count("+loader = ddpify.distributed_loader(") == 2
    assert (inputs / "a.py").read_text() == TRAINING
    assert cli("a.py", "b.py", "--in-place", "-q", cwd=inputs).returncode == 0
    assert all("ddpify.distributed_loader(" in (inputs / n).read_text() for n in ("a.py", "b.py"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["a.py", "b.py", "-o", "out.py"], "-o names one output file but 2 inputs were given: use --out-dir DIR"),
        (["a.py", "b.py"], "2 inputs need --out-dir DIR, --in-place or --diff (stdout takes one result)"),
        (["a.py", "-", "--out-dir", "dist"], "- (stdin) is converted alone, not with other inputs"),
        (["a.py", "sub/a.py", "--out-dir", "dist"], "a.py and sub/a.py would both be written to dist/a.py"),
        (["a.py", "-o", "x.py", "--out-dir", "dist"], "-o names one output file, --out-dir a folder for several: give one of them"),
        (["a.py", "--out-dir", "a.py"], "a.py: --out-dir is not a directory"),
        (["a.py", "b.py", "--diff", "--in-place"], "--diff writes nothing: it cannot be combined with -o, --out-dir or --in-place"),
    ],
    ids=["o-with-several", "stdout-with-several", "stdin-with-several", "same-name", "o-and-out-dir", "out-dir-is-a-file", "diff-in-place"],
)
def test_usage_errors_write_nothing(cli, inputs: Path, args: list[str], message: str) -> None:
    (inputs / "sub").mkdir()
    (inputs / "sub" / "a.py").write_text(TRAINING)
    before = sorted(p.relative_to(inputs) for p in inputs.rglob("*"))
    result = cli(*args, cwd=inputs)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"ddpify: error: {message}"]
    assert sorted(p.relative_to(inputs) for p in inputs.rglob("*")) == before
