"""Writes are atomic: a temporary file in the destination's folder, then a rename. Whatever
interrupts a run — Ctrl-C halfway through the write, a failing rename, a full disk — leaves
the old file exactly as it was and no temporary file behind."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ddpify import source_io
from ddpify.cli import main
from ddpify.errors import DdpifyError

TRAINING = """\
import torch
from torch.utils.data import DataLoader

loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)
model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for batch in loader:
        pass
"""
OLD = b"# the previous result\n" * 100


class _HalfWriter(io.BufferedWriter):
    """Writes half of what it is given, then the user presses Ctrl-C."""

    def write(self, data):  # type: ignore[no-untyped-def, override]
        super().write(bytes(data)[: len(data) // 2])
        super().flush()
        raise KeyboardInterrupt


def _half_fdopen(fd, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
    assert "b" in mode
    return _HalfWriter(io.FileIO(fd, "wb"))


def _raise(exc: BaseException):  # type: ignore[no-untyped-def]
    def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise exc
    return fail


INTERRUPTIONS = {
    "ctrl-c-halfway-through-the-write": ("fdopen", _half_fdopen),
    "ctrl-c-before-the-rename": ("replace", _raise(KeyboardInterrupt())),
    "rename-fails": ("replace", _raise(OSError(errno.EXDEV, os.strerror(errno.EXDEV)))),
    "disk-full-at-fsync": ("fsync", _raise(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))),
}


@pytest.mark.parametrize("case", list(INTERRUPTIONS))
@pytest.mark.parametrize("mode", ["output", "in-place"])
def test_interrupted_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, mode: str) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    out = tmp_path / "train_ddp.py"
    out.write_bytes(OLD)
    target = src if mode == "in-place" else out
    before = target.read_bytes()
    attribute, replacement = INTERRUPTIONS[case]
    monkeypatch.setattr(os, attribute, replacement)
    args = [str(src), "--in-place"] if mode == "in-place" else [str(src), "-o", str(out)]
    result = CliRunner().invoke(main, args)
    monkeypatch.undo()

    assert result.exit_code != 0
    assert "Traceback" not in result.output
    if case.startswith("ctrl-c"):  # documented: exit 130, one line
        assert result.exit_code == 130 and result.stderr == "ddpify: interrupted\n"
    if case in ("rename-fails", "disk-full-at-fsync"):  # an OS error: one line, exit 2
        assert result.exit_code == 2
        assert result.stderr.startswith("ddpify: error:") and "cannot write" in result.stderr
        assert len(result.stderr.splitlines()) == 1
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py", "train_ddp.py"]  # no temporary left


def test_write_atomically_replaces_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.py"
    path.write_bytes(OLD)
    monkeypatch.setattr(os, "replace", _raise(OSError(errno.EIO, os.strerror(errno.EIO))))
    with pytest.raises(DdpifyError, match="cannot write: Input/output error"):
        source_io.write_atomically(path, b"new\n")
    monkeypatch.undo()
    assert path.read_bytes() == OLD and [p.name for p in tmp_path.iterdir()] == ["f.py"]
    source_io.write_atomically(path, b"new\n")
    assert path.read_bytes() == b"new\n" and [p.name for p in tmp_path.iterdir()] == ["f.py"]


def test_result_that_cannot_be_encoded_is_refused_before_writing(tmp_path: Path) -> None:
    source = source_io.SourceFile(text="x = 1\n", encoding="ascii", bom=False)
    with pytest.raises(DdpifyError, match="cannot encode the result as ascii"):
        source_io.encode(source, "x = 'é'\n")
