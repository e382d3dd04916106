"""What a new reader meets first: the two set-up commands, then an install that works without
a PyPI release (from a clone or a wheel built from it; the wheel command is run here)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    return README[start : README.index("\n## ", start + 3)]


def test_the_two_commands_come_first() -> None:
    first = re.findall(r"^## (.+)$", README, re.M)[0]
    assert first == "Two commands on a fresh clone"
    block = _section(first).split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    assert all((ROOT / c.split()[1]).is_file() for c in commands)


def test_install_never_asks_pypi_for_ddpify() -> None:
    commands = [line.split("#", 1)[0].strip() for line in _section("Install").splitlines() if line.startswith("pip ")]
    assert commands and not any(re.fullmatch(r"pip install '?ddpify(\[\w+\])?'?", c) for c in commands)
    assert "pip install ." in commands


def test_documented_wheel_builds_and_installs(tmp_path: Path) -> None:
    """The README's ``pip wheel`` line, run as written but without build isolation (the tests
    have no network: hatchling is a test dependency); the wheel's ddpify then runs."""
    (build,) = [line.split("#", 1)[0].strip() for line in _section("Install").splitlines() if line.startswith("pip wheel")]
    args = shlex.split(build)[1:]
    args[args.index("dist")] = str(tmp_path / "dist")
    built = subprocess.run([sys.executable, "-m", "pip", *args, "--no-build-isolation", "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("ddpify-*-py3-none-any.whl")
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=300
    )
    assert installed.returncode == 0, installed.stderr
    run = subprocess.run(
        [sys.executable, "-c", "import ddpify, sys; from ddpify.cli import main; print(ddpify.__file__); main(['--version'])"],
        env={"PYTHONPATH": str(site), "PATH": ""},
        cwd=tmp_path,  # not the clone: its ddpify/ would shadow the installed one
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.startswith(str(site)), run.stdout + run.stderr
    assert "ddpify" in run.stdout.splitlines()[1]


def test_the_readme_stays_a_five_minute_read_and_links_the_reference() -> None:
    """Reference material lives in docs/ (linked), so the README stays what a new user needs."""
    assert len(README.splitlines()) <= 350
    linked = set(re.findall(r"\]\((docs/[\w.]+\.md)(?:#[\w-]+)?\)", README))
    assert {"docs/convert.md", "docs/verify.md", "docs/launch.md", "docs/design.md", "docs/rules.md"} <= linked
    assert all((ROOT / path).is_file() for path in linked)
    for section in ("Two commands on a fresh clone", "Install", "The command line", "Launching", "Where to read more"):
        assert f"## {section}" in README, section
