"""``[tool.ddpify]`` in pyproject.toml, found from the checked file upwards.

    [tool.ddpify]
    select = ["DDP"]                 # codes or prefixes (default: all)
    ignore = ["DDP012"]
    exclude = ["legacy/*", "scripts/old_*.py"]
    [tool.ddpify.per-file-ignores]
    "tests/*" = ["DDP005", "DDP012"]

Command-line --select/--ignore take precedence over select/ignore from the file.
"""

from __future__ import annotations

import fnmatch
import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ddpify.errors import DdpifyError


@dataclass(frozen=True)
class Config:
    root: Path | None = None  # the folder of the pyproject.toml it came from
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def relative(self, path: Path) -> str:
        resolved = path.resolve()
        if self.root is not None:
            try:
                return PurePosixPath(resolved.relative_to(self.root)).as_posix()
            except ValueError:
                pass
        return PurePosixPath(path).as_posix()

    def is_excluded(self, path: Path) -> bool:
        rel = self.relative(path)
        return any(_match(rel, pattern) for pattern in self.exclude)

    def ignored_for(self, path: Path) -> tuple[str, ...]:
        rel = self.relative(path)
        return tuple(code for pattern, codes in self.per_file_ignores if _match(rel, pattern) for code in codes)


def _match(rel: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return (
        fnmatch.fnmatch(rel, pattern)
        or fnmatch.fnmatch(rel, pattern + "/*")
        or any(fnmatch.fnmatch(part, pattern) for part in rel.split("/"))
    )


def find_config(path: Path) -> Config:
    """The config of the nearest pyproject.toml above ``path`` that has ``[tool.ddpify]``
    (or the nearest pyproject.toml at all, which then ends the search)."""
    start = path.resolve()
    folder = start if start.is_dir() else start.parent
    return _config_in(folder)


@functools.lru_cache(maxsize=256)
def _config_in(folder: Path) -> Config:
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            return _load(pyproject)
    return Config()


def _load(pyproject: Path) -> Config:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise DdpifyError(f"{pyproject}: cannot read config: {exc}") from None
    table = data.get("tool", {}).get("ddpify", {})
    if not isinstance(table, dict):
        raise DdpifyError(f"{pyproject}: [tool.ddpify] must be a table")
    per_file = table.get("per-file-ignores", table.get("per_file_ignores", {}))
    return Config(
        root=pyproject.parent.resolve(),
        select=_codes(table.get("select", []), pyproject, "select"),
        ignore=_codes(table.get("ignore", []), pyproject, "ignore"),
        exclude=tuple(str(p) for p in table.get("exclude", [])),
        per_file_ignores=tuple((str(k), _codes(v, pyproject, k)) for k, v in per_file.items()),
    )


def _codes(value: object, pyproject: Path, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DdpifyError(f"{pyproject}: [tool.ddpify] {key} must be a list of rule codes")
    return tuple(v.upper() for v in value)
