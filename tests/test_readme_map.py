"""The module map (docs/design.md, linked from the README) stays true: every module of ``ddpify/`` is on it (by its path or a
folder entry that holds it), and every path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _map() -> list[str]:
    """The map's paths, each relative to ``ddpify/`` (folders end with ``/``)."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = text.split("## Development", 1)[1].split("```\n", 2)[1]
    paths: list[str] = []
    stack: list[tuple[int, str]] = []
    for line in block.splitlines()[1:]:  # the first line is "ddpify/"
        match = re.match(r"^( +)(\S+\.py|\S+/)\s", line + " ")
        if not match or len(match.group(1)) > 8:  # deeper text continues a description
            continue
        depth, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        path = "".join(p for _, p in stack) + name
        paths.append(path)
        if name.endswith("/"):
            stack.append((depth, name))
    return paths


def test_every_module_is_on_the_map() -> None:
    listed = _map()
    folders = [p for p in listed if p.endswith("/")]
    for module in sorted((ROOT / "ddpify").rglob("*.py")):
        relative = module.relative_to(ROOT / "ddpify").as_posix()
        if relative == "__init__.py" or (module.name == "__init__.py" and any(relative.startswith(f) for f in folders)):
            continue
        covered = relative in listed or any(
            relative.startswith(f) and not any(p.startswith(f) and p.endswith(".py") for p in listed) for f in folders
        )
        assert covered, f"ddpify/{relative} is not on the README's module map"


def test_every_path_on_the_map_exists() -> None:
    for path in _map():
        target = ROOT / "ddpify" / path if not path.startswith(("templates/", "tests/", "examples/", "benchmarks/")) else ROOT / path
        assert target.exists(), f"the README's module map names {path}, which does not exist"
