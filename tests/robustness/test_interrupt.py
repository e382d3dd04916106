"""Ctrl-C: exit 130 (what a shell reports for SIGINT), one line ``ddpify: interrupted``, nothing
written. A real SIGINT to a real process, sent while it waits on a stdin pipe that stays open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _wait_until_blocked_reading(pid: int, timeout: float = 30) -> None:
    """Until the kernel shows the process asleep in a pipe read (Linux: /proc/PID/wchan), so the
    signal lands mid-run, not during the interpreter's start-up; elsewhere a fixed pause."""
    wchan = Path(f"/proc/{pid}/wchan")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            where = wchan.read_text()
        except OSError:
            time.sleep(3)
            return
        if "pipe" in where and "read" in where:
            return
        time.sleep(0.05)
    pytest.fail(f"ddpify never blocked reading stdin (wchan: {where!r})")


@pytest.mark.parametrize("args", [["-", "-o", "out.py"], ["-"]], ids=["to-a-file", "to-stdout"])
def test_sigint_mid_run_exits_130_with_one_line_and_writes_nothing(tmp_path: Path, args: list[str]) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "ddpify", *args],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    process.stdin.write(b"import torch\nfrom torch.utils.data import DataLoader\n")
    process.stdin.flush()  # part of a script; the pipe stays open, so ddpify waits for the rest
    _wait_until_blocked_reading(process.pid)
    os.kill(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    process.stdin.close()

    assert process.returncode == 130
    assert stderr.decode() == "ddpify: interrupted\n"
    assert stdout == b""
    assert list(tmp_path.iterdir()) == []


def test_interrupted_check_exits_130(tmp_path: Path) -> None:
    from click.testing import CliRunner

    import ddpify.check.run
    from ddpify.cli import main

    (tmp_path / "train.py").write_text("import torch.distributed\n")

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ddpify.check.run, "check_paths", interrupted)
        result = CliRunner().invoke(main, ["check", "--no-cache", str(tmp_path)])
    assert result.exit_code == 130
    assert result.stderr == "ddpify: interrupted\n" and "All checks passed" not in result.stdout


def test_ctrl_c_during_a_pooled_check_is_one_line(tmp_path: Path) -> None:
    """A terminal's Ctrl-C reaches the whole process group, pool workers included: only the
    parent answers (one line, 130); no worker prints a KeyboardInterrupt traceback."""
    script = (Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "train_ddp.py").read_text()
    for index in range(24):
        (tmp_path / f"train_{index}.py").write_text(script)
    process = subprocess.Popen(
        [sys.executable, "-m", "ddpify", "check", "--no-cache", "-j", "2", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, as under a terminal; the test is not in it
    )
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if not children.exists():
            pytest.skip("no /proc/PID/task/PID/children to see the pool start")
        if len(children.read_text().split()) >= 2:  # the pool's workers are running
            break
        time.sleep(0.05)
    else:
        pytest.skip("the check ended or never started a pool")
    time.sleep(0.5)  # let the workers start on their first files
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.decode() == "ddpify: interrupted\n"
