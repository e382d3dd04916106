"""``[tool.ddpify]`` in pyproject.toml, found from the checked file upwards.

    [tool.ddpify]
    select = ["DDP"]                 # codes or prefixes (default: the default rules; "DDP": all)
    extend-select = ["DDP012"]       # opt-in rules on top of the selection
    ignore = ["DDP012"]
    exclude = ["legacy/*", "scripts/old_*.py"]
    [tool.ddpify.per-file-ignores]
    "tests/*" = ["DDP005", "DDP012"]

Command-line --select replaces the file's select and extend-select; --extend-select and
--ignore add to the file's. A key or a
rule code that does not exist is an error with the nearest valid one, never silently ignored:
a misspelt ``ignore`` would otherwise turn every rule back on without a word.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ddpify.errors import DdpifyError

KEYS = ("select", "extend-select", "extend_select", "ignore", "exclude", "per-file-ignores", "per_file_ignores")
_RULE_MODULE = re.compile(r"ddp(\d{3})_\w+")


@dataclass(frozen=True)
class Config:
    root: Path | None = None  # the folder of the pyproject.toml it came from
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
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
    for key in table:
        if key not in KEYS:
            raise DdpifyError(f"{pyproject}: unknown key {key!r} in [tool.ddpify]{_did_you_mean(key, KEYS, quote=True)}")
    per_file = table.get("per-file-ignores", table.get("per_file_ignores", {}))
    if not isinstance(per_file, dict):
        raise DdpifyError(f"{pyproject}: [tool.ddpify] per-file-ignores must be a table of patterns to rule codes")
    return Config(
        root=pyproject.parent.resolve(),
        select=_codes(table.get("select", []), pyproject, "select"),
        extend_select=_codes(table.get("extend-select", table.get("extend_select", [])), pyproject, "extend-select"),
        ignore=_codes(table.get("ignore", []), pyproject, "ignore"),
        exclude=tuple(str(p) for p in table.get("exclude", [])),
        per_file_ignores=tuple((str(k), _codes(v, pyproject, f"per-file-ignores {k!r}")) for k, v in per_file.items()),
    )


def _codes(value: object, pyproject: Path, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DdpifyError(f"{pyproject}: [tool.ddpify] {key} must be a list of rule codes")
    codes = tuple(normalised_code(v) for v in value)
    for code in codes:
        if unknown_code(code):
            raise DdpifyError(f"{pyproject}: unknown rule {code} in [tool.ddpify] {key}{_did_you_mean(code, rule_codes())}")
    return codes


@functools.cache
def rule_codes() -> tuple[str, ...]:
    """Every rule code, DDP000 included, read from the module names of ``ddpify.check.rules``
    (``ddpNNN_name.py``) without importing them: validating ``--select`` must not cost the
    libcst import that only files needing the engine pay for."""
    import importlib.util
    import pkgutil

    from ddpify.check.scope import NOT_DISTRIBUTED

    spec = importlib.util.find_spec("ddpify.check.rules")  # imports ddpify.check, not the rules
    assert spec is not None and spec.submodule_search_locations is not None
    numbers = (_RULE_MODULE.fullmatch(info.name) for info in pkgutil.iter_modules(spec.submodule_search_locations))
    return tuple(sorted({NOT_DISTRIBUTED, *(f"DDP{match.group(1)}" for match in numbers if match)}))


def normalised_code(text: str) -> str:
    """A code or prefix as written in --select / [tool.ddpify]: upper case; ``ALL`` (ruff's
    spelling) is ``DDP``, the prefix of every rule."""
    code = text.strip().upper()
    return "DDP" if code == "ALL" else code


def unknown_code(code: str) -> str | None:
    """``unknown rule DDP999 (did you mean DDP009?)``, or None for a code or a prefix of one."""
    codes = rule_codes()
    if code and any(known.startswith(code) for known in codes):
        return None
    return f"unknown rule {code or repr(code)}{_did_you_mean(code, codes)}"


def _did_you_mean(word: str, choices: tuple[str, ...], *, quote: bool = False) -> str:
    """The closest choice by difflib's ratio (cutoff 0.6, as ``get_close_matches``); ties go to
    more characters in the same places, then to the first in sorted order (DDP999: DDP009)."""
    scored = [
        (difflib.SequenceMatcher(None, word, choice).ratio(), sum(a == b for a, b in zip(word, choice, strict=False)), choice)
        for choice in sorted(choices)
    ]
    ratio, _, best = max(scored, key=lambda item: item[:2], default=(0.0, 0, ""))
    if ratio < 0.6:
        return ""
    return f" (did you mean {best!r}?)" if quote else f" (did you mean {best}?)"
