"""Bad input never damages anything: one line on stderr, a documented exit code (README: 2 bad
input or usage, 3 internal error), no traceback, and no file written or touched — neither the
input nor an output that already exists (same bytes, same mtime, no temporary file left).

Complements tests/cli/test_cli.py (which runs the same kind of cases in a subprocess); these run
the CLI in-process, so each costs milliseconds.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ddpify.cli import main

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
SENTINEL = b"# an earlier result the user wants to keep\n"


def run(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every entry below ``folder``: content (files), mtime and mode; links not followed."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if stat.S_ISREG(info.st_mode) else os.readlink(path).encode() if path.is_symlink() else b""
        found[str(path.relative_to(folder))] = (content, info.st_mtime_ns, info.st_mode)
    return found


def assert_one_line_error(result, code: int, *needles: str) -> str:
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ddpify: "), lines[0]
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert result.stdout == ""
    return lines[0]


def _binary() -> bytes:
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


BAD_INPUTS = {
    # name: (bytes, needle in the message)
    "syntax-error": (b"import torch\n\ndef f(:\n    pass\n", "syntax error"),
    "python2-print": (b"import torch\nprint 'hello'\n", "syntax error"),
    "not-utf8": (b"import torch\n# caf\xe9 au lait\nx = 1\n", "cannot decode as utf-8"),
    "cookie-ascii-but-not": (b"# -*- coding: ascii -*-\nimport torch\n# caf\xc3\xa9\n", "cannot decode as ascii"),
    "unknown-cookie": (b"# -*- coding: klingon -*-\nimport torch\n", "unknown encoding: klingon"),
    "binary": (_binary(), "binary file"),
    "utf16": ("import torch\n".encode("utf-16"), "binary file"),
    "too-deep": (b"import torch\nfrom torch.utils.data import DataLoader\ny = " + b" + ".join([b"1"] * 600) + b"\n", "nested too deeply"),
}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "out.py").write_bytes(SENTINEL)
    return tmp_path


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_is_refused_and_nothing_is_touched(workdir: Path, name: str) -> None:
    content, needle = BAD_INPUTS[name]
    bad = workdir / "bad.py"
    bad.write_bytes(content)
    before = snapshot(workdir)
    assert_one_line_error(run(str(bad), "-o", str(workdir / "out.py")), 2, needle, str(bad))
    assert_one_line_error(run(str(bad), "--in-place"), 2, needle)
    assert_one_line_error(run(str(bad)), 2, needle)  # to stdout: nothing on stdout either
    assert snapshot(workdir) == before


def test_syntax_error_message_is_file_line_col(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(BAD_INPUTS["syntax-error"][0])
    line = assert_one_line_error(run(str(bad)), 2)
    assert re.match(rf"ddpify: error: {re.escape(str(bad))}:\d+:\d+: syntax error: \S", line), line


def test_syntax_error_position_is_where_python_puts_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(BAD_INPUTS["syntax-error"][0])
    assert f"{bad}:3:7: syntax error" in run(str(bad)).stderr


def test_check_names_the_same_syntax_error_position(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"import torch.distributed as dist\n\ndef f(:\n    pass\n")
    result = run("check", str(bad))
    assert result.exit_code == 2 and f"{bad}:3:7: syntax error" in result.output, result.output


def test_empty_file_converts_to_empty(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_bytes(b"")
    out = tmp_path / "out.py"
    result = run(str(empty), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == b""
    assert "no training code" in result.stderr and "Traceback" not in result.output
    to_stdout = run(str(empty), "-q")
    assert to_stdout.exit_code == 0 and to_stdout.stdout_bytes == b""
    assert run("-", "-q", stdin=b"").stdout_bytes == b""
    before = snapshot(tmp_path)
    assert run(str(empty), "--in-place", "-q").exit_code == 0
    assert snapshot(tmp_path) == before  # nothing to do: not even rewritten


@pytest.mark.parametrize("content", [b"\n", b"# just a comment", b"  \n\t\n", b"\xef\xbb\xbf"], ids=["newline", "comment-no-eol", "blank", "bom-only"])
def test_trivial_files_come_out_identical(tmp_path: Path, content: bytes) -> None:
    src = tmp_path / "t.py"
    src.write_bytes(content)
    out = tmp_path / "out.py"
    assert run(str(src), "-o", str(out), "-q").exit_code == 0
    assert out.read_bytes() == content


def test_missing_input(workdir: Path) -> None:
    before = snapshot(workdir)
    assert_one_line_error(run(str(workdir / "nope.py"), "-o", str(workdir / "out.py")), 2, "no such file")
    assert_one_line_error(run(str(workdir / "nope.py"), "-o", str(workdir / "new.py")), 2, "no such file")
    assert snapshot(workdir) == before


def test_directory_as_input(workdir: Path) -> None:
    (workdir / "pkg").mkdir()
    before = snapshot(workdir)
    assert_one_line_error(run(str(workdir / "pkg"), "-o", str(workdir / "out.py")), 2, "is a directory")
    assert_one_line_error(run(str(workdir / "pkg"), "--in-place"), 2, "is a directory")
    assert snapshot(workdir) == before


def test_directory_as_output(workdir: Path) -> None:
    (workdir / "train.py").write_text(TRAINING)
    (workdir / "results").mkdir()
    before = snapshot(workdir)
    assert_one_line_error(run(str(workdir / "train.py"), "-o", str(workdir / "results")), 2, "is a directory")
    assert snapshot(workdir) == before


def test_output_below_a_regular_file(workdir: Path) -> None:
    (workdir / "train.py").write_text(TRAINING)
    before = snapshot(workdir)
    assert_one_line_error(run(str(workdir / "train.py"), "-o", str(workdir / "out.py" / "x.py")), 2, "cannot write")
    assert snapshot(workdir) == before


def test_unwritable_output_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only directory. Root ignores permission bits (CI runs as root), so there the
    kernel's EACCES is simulated at the one place a file gets created: ``os.open``."""
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "out.py").write_bytes(SENTINEL)
    locked.chmod(0o555)
    if os.geteuid() == 0:
        real_open = os.open

        def guarded_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
            if Path(path).parent == locked and flags & os.O_CREAT:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", guarded_open)
    try:
        before = snapshot(tmp_path)
        for name in ("out.py", "new.py"):
            assert_one_line_error(run(str(src), "-o", str(locked / name)), 2, "cannot write", "Permission denied")
        assert snapshot(tmp_path) == before
    finally:
        locked.chmod(0o755)


@pytest.mark.parametrize("spelling", ["same", "relative", "dotdot", "symlink", "hardlink"])
def test_output_equal_to_input_needs_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    output = {
        "same": str(src),
        "relative": "./train.py",
        "dotdot": "sub/../train.py",
        "symlink": "link.py",
        "hardlink": "hard.py",
    }[spelling]
    if spelling == "symlink":
        os.symlink("train.py", "link.py")
    if spelling == "hardlink":
        os.link("train.py", "hard.py")
    before = snapshot(tmp_path)
    assert_one_line_error(run(str(src), "-o", output), 2, "--in-place")
    assert_one_line_error(run("train.py", "-o", output), 2, "--in-place")
    assert snapshot(tmp_path) == before


def test_in_place_through_a_symlink_rewrites_the_target(tmp_path: Path) -> None:
    target = tmp_path / "real_train.py"
    target.write_text(TRAINING)
    link = tmp_path / "train.py"
    link.symlink_to(target.name)
    assert run(str(link), "--in-place", "-q").exit_code == 0
    assert link.is_symlink() and os.readlink(link) == target.name  # the link survives
    assert "ddpify.distributed_loader(" in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real_train.py", "train.py"]


def test_permissions_new_file_follows_umask_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    old = os.umask(0o022)
    try:
        assert run(str(src), "-o", str(tmp_path / "new.py"), "-q").exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.py").stat().st_mode) == 0o644  # not mkstemp's 0600
    src.chmod(0o750)
    assert run(str(src), "--in-place", "-q").exit_code == 0
    assert stat.S_IMODE(src.stat().st_mode) == 0o750


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    before = snapshot(tmp_path)
    assert_one_line_error(run(str(src), "--in-place", "-o", str(tmp_path / "x.py")), 2, "--in-place")
    assert_one_line_error(run(str(src), "--diff", "-o", str(tmp_path / "x.py")), 2, "--diff")
    assert_one_line_error(run("-", "--in-place", stdin=TRAINING.encode()), 2, "--in-place")
    assert snapshot(tmp_path) == before


def test_internal_error_is_one_line_exit_3_and_writes_nothing(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ddpify.api

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("unexpected node\nwith a second line")

    src = workdir / "train.py"
    src.write_text(TRAINING)
    monkeypatch.setattr(ddpify.api, "convert_source", broken)
    before = snapshot(workdir)
    line = assert_one_line_error(run(str(src), "-o", str(workdir / "out.py")), 3, "internal error", "ValueError: unexpected node")
    assert "ddpify bug" in line and "nothing written" in line
    assert_one_line_error(run(str(src), "--in-place"), 3, "internal error")
    assert snapshot(workdir) == before
    monkeypatch.setenv("DDPIFY_DEBUG", "1")
    assert isinstance(run(str(src)).exception, ValueError)  # the traceback, for a developer


def test_closed_stdout_is_not_a_traceback(tmp_path: Path) -> None:
    """`ddpify train.py | head -1`: the reader goes away before ddpify writes."""
    src = tmp_path / "train.py"
    src.write_text(TRAINING)
    process = subprocess.Popen([sys.executable, "-m", "ddpify", str(src), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=60) != 0
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr, stderr


def test_check_with_a_closed_stdout_is_no_internal_error(tmp_path: Path) -> None:
    """`ddpify check . | head -1` on many findings: the reader leaves while check still writes;
    exit 1 as for SIGPIPE, never "internal error ... a ddpify bug"."""
    src = tmp_path / "many.py"
    src.write_text("import torch\nimport torch.distributed as dist\n" + "".join(f"x{i} = torch.load('a{i}.pt')\n" for i in range(3000)))
    process = subprocess.Popen(
        [sys.executable, "-m", "ddpify", "check", "--no-cache", str(src)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert b"internal error" not in stderr and b"Traceback" not in stderr, stderr


def test_a_file_whose_analysis_recurses_too_deeply_is_said_and_the_others_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A RecursionError in one file's analysis (a ddpify limit) is no crash of the whole run:
    that file is named as not checked, the next file is still checked, and the summary never
    says all checks passed."""
    import ddpify.check.run as run

    real = run._engine

    def engine(task, options):
        if str(task.path).endswith("deep.py"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(task, options)

    monkeypatch.setattr(run, "_engine", engine)
    deep, plain = tmp_path / "deep.py", tmp_path / "plain.py"
    deep.write_text("import torch.distributed as dist\n")
    plain.write_text("import torch.distributed as dist\nimport torch\ntorch.load('x.pt')\n")
    result = CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", str(deep), str(plain)])
    assert "deep.py: not checked: the analysis recursed too deeply" in result.output, result.output
    assert "DDP004" in result.output and "All checks passed" not in result.output, result.output
    assert result.exit_code != 3, result.output
