"""Which files ``ddpify check PATHS`` looks at: ``.py``, ``.pyi`` and ``.ipynb`` files under the
given folders, minus what git ignores, minus the usual tool folders (Jupyter's checkpoints
included), minus ``exclude`` from the config. A file named explicitly is always checked (like
ruff), unless excluded by the config."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from ddpify.check.config import find_config

SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        "env",
        "__pycache__",
        "build",
        "dist",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".eggs",
        ".ipynb_checkpoints",  # Jupyter's autosaved copies of the notebooks beside it
    }
)
SUFFIXES = (".py", ".pyi", ".ipynb")


def python_files(paths: Iterable[Path]) -> Iterator[Path]:
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            candidates = sorted(_walk(path))
            ignored = _git_ignored(path, candidates)
            candidates = [c for c in candidates if c not in ignored]
        else:
            candidates = [path]
        for candidate in candidates:
            key = candidate.resolve()
            if key in seen or find_config(candidate).is_excluded(candidate):
                continue
            seen.add(key)
            yield candidate


def _walk(folder: Path) -> Iterator[Path]:
    for child in folder.iterdir():
        if child.is_dir():
            if child.name not in SKIPPED_FOLDERS and not child.name.endswith(".egg-info"):
                yield from _walk(child)
        elif child.suffix in SUFFIXES and child.is_file():
            yield child


def _git_ignored(folder: Path, files: list[Path]) -> set[Path]:
    """Files git ignores (``git check-ignore``); nothing when not in a git work tree."""
    if not files:
        return set()
    try:
        result = subprocess.run(
            ["git", "check-ignore", "--stdin", "-z"],
            cwd=folder,
            input="\0".join(str(f.resolve()) for f in files).encode(),
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    if result.returncode not in (0, 1):
        return set()
    ignored = {Path(p) for p in result.stdout.decode().split("\0") if p}
    return {f for f in files if f.resolve() in ignored}
