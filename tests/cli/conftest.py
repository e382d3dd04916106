"""The CLI tests run ``python -m ddpify`` as a user would: a real process, real exit codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def cli() -> Run:
    """``cli(*args, cwd=..., stdin=...)``: the finished ``ddpify`` process, text output."""

    def run(*args: str, cwd: Path | None = None, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "ddpify", *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=timeout
        )

    return run
