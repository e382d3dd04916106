"""Where ``-o`` may write: a regular file or a new path, nothing else. A FIFO, a device node, a
directory, or a symlink to any of them is exit 2 with one line and stays exactly as it was;
``-o -`` is stdout; the input is never touched."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
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


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    """A temporary character device like /dev/null (1, 3); creating one needs root."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")


def _directory(path: Path) -> None:
    path.mkdir()


MAKERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "is a FIFO (named pipe)"),
    "device": (_device, "is a character device"),
    "directory": (_directory, "is a directory"),
}


def _identity(path: Path) -> tuple[int, int, int]:
    info = os.lstat(path)
    return info.st_ino, info.st_mode, info.st_rdev


@pytest.mark.parametrize("through_symlink", [False, True], ids=["direct", "symlink"])
@pytest.mark.parametrize("kind", list(MAKERS))
def test_output_that_is_not_a_regular_file_is_refused_untouched(cli, tmp_path: Path, kind: str, through_symlink: bool) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    make, words = MAKERS[kind]
    special = tmp_path / f"special_{kind}"
    make(special)
    target = special
    if through_symlink:
        target = tmp_path / "link_out.py"
        target.symlink_to(special.name)
    before = {p.name: _identity(p) for p in tmp_path.iterdir()}

    result = cli(str(src), "-o", str(target), timeout=60)  # a FIFO opened for writing would block: it must not be

    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"ddpify: error: {target}: {words}")
    assert ("through a symlink" in line) == through_symlink
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert {p.name: _identity(p) for p in tmp_path.iterdir()} == before  # nothing replaced, no temporary file
    assert src.read_text() == TRAINING


def test_dev_stdout_on_a_pipe_is_refused_naming_it(cli, tmp_path: Path) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    result = cli(str(src), "-o", "/dev/stdout")  # our stdout is a pipe
    assert result.returncode == 2
    assert result.stderr.startswith("ddpify: error: /dev/stdout: is a FIFO (named pipe), through a symlink; ")
    assert "-o - for stdout" in result.stderr and "/proc/" not in result.stderr


def test_dash_is_stdout(cli, tmp_path: Path) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    result = cli(str(src), "-o", "-", "-q", cwd=tmp_path)
    assert result.returncode == 0
    assert "ddpify.distributed_loader(" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]  # no file named "-"


def test_regular_file_new_path_and_symlink_to_a_file_are_written(cli, tmp_path: Path) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    old = tmp_path / "old.py"
    old.write_text("# old\n")
    link = tmp_path / "link.py"
    link.symlink_to(old.name)
    for target in (old, tmp_path / "new.py", link):
        assert cli(str(src), "-o", str(target), "-q").returncode == 0
    assert "ddpify.distributed_loader(" in old.read_text() and "ddpify.distributed_loader(" in (tmp_path / "new.py").read_text()
    assert link.is_symlink()


def test_write_atomically_refuses_a_fifo_itself(tmp_path: Path) -> None:
    """The last line of defence: even a caller that skipped the check never replaces a FIFO."""
    from ddpify import source_io
    from ddpify.errors import DdpifyError

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(DdpifyError, match="is a FIFO"):
        source_io.write_atomically(fifo, b"x = 1\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_launch_script_output_is_held_to_the_same_rule(tmp_path: Path) -> None:
    fifo = tmp_path / "run.sh"
    os.mkfifo(fifo)
    (tmp_path / "train_ddp.py").write_text("import ddpify.runtime as ddpify\n")
    result = subprocess.run(
        [sys.executable, "-m", "ddpify", "launch-script", "--launcher", "torchrun", "-o", str(fifo), "train_ddp.py"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2 and "is a FIFO" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
