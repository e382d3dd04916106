"""Check many files: discovery, per-file config, reading, fixing and writing back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ddpify import source_io
from ddpify.check.config import find_config
from ddpify.check.engine import check_source, select_rules
from ddpify.check.files import python_files
from ddpify.errors import DdpifyError
from ddpify.findings import CheckResult


@dataclass(frozen=True)
class Options:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fix: bool = False
    unsafe_fixes: bool = False
    write: bool = True  # False with --diff: compute fixes, write nothing
    require_ddp: bool = False


@dataclass
class Outcome:
    results: list[CheckResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def check_paths(paths: Sequence[Path], options: Options) -> Outcome:
    outcome = Outcome()
    for path in python_files(paths):
        try:
            result = check_file(path, options)
        except DdpifyError as error:
            outcome.errors.append(str(error))
            continue
        outcome.results.append(result)
    return outcome


def check_file(path: Path, options: Options) -> CheckResult:
    config = find_config(path)
    rules = select_rules(options.select or config.select, (*options.ignore, *config.ignore, *config.ignored_for(path)))
    source = source_io.read_source(path)
    result = check_source(
        source.text, str(path), rules=rules, fix=options.fix, unsafe_fixes=options.unsafe_fixes,
        require_ddp=options.require_ddp,
    )
    if result.fixed is not None and options.write:
        source_io.write_atomically(path, source_io.encode(source, result.fixed))
    return result


def missing(paths: Iterable[Path]) -> Optional[str]:
    for path in paths:
        if not path.exists():
            return f"{path}: no such file or directory"
    return None
