"""Check many files: discovery, per-file config, the result cache, a process pool, fixing and
writing back.

Cheap work first, in this process, without importing libcst or the rules: read each file,
look its findings up in the cache, and settle files that never mention distributed training
(a syntax check by CPython's own parser is all they need). Only the files left are parsed and
linted by the engine: here for one file, in a pool of processes when several need it and the
machine has more than one core.

A notebook is checked as the script of its code cells (``ddpify.notebook``), its findings moved
back to ``nb.ipynb:cell_N`` and the cell's line; it is never fixed (its JSON is not rewritten).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ddpify import source_io
from ddpify.analysis import project_files
from ddpify.analysis.budget import Exhausted
from ddpify.check import scope
from ddpify.check.cache import Cache
from ddpify.check.config import find_config
from ddpify.check.files import python_files
from ddpify.errors import DdpifyError, compiles
from ddpify.findings import CheckResult, Finding

if TYPE_CHECKING:
    from ddpify.notebook import NotebookScript

Progress = Callable[[int, int], None]  # (files done, files in all)

# A pool pays for itself from this many files that need the engine (a fork is cheap; a spawned
# worker first imports libcst and the rules, about half a second).
POOL_MIN_FILES_FORK = 2
POOL_MIN_FILES_SPAWN = 8


@dataclass(frozen=True)
class Options:
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fix: bool = False
    unsafe_fixes: bool = False
    write: bool = True  # False with --diff: compute fixes, write nothing
    require_ddp: bool = False
    cache: bool = True
    cache_dir: Path | None = None  # None: cache.default_dir()
    jobs: int | None = None  # None: one per available core


@dataclass
class Outcome:
    results: list[CheckResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Task:
    """One file for the engine (picklable: it may travel to a worker process)."""

    path: Path
    source: source_io.SourceFile
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    key: str | None
    fixable: bool = True  # False for a notebook: its JSON is never rewritten
    extend_select: tuple[str, ...] = ()


def check_paths(paths: Sequence[Path], options: Options, progress: Progress | None = None) -> Outcome:
    files = list(python_files(paths))
    total = len(files)
    done = 0
    cache = Cache(options.cache_dir) if options.cache else None
    slots: list[CheckResult | str | None] = [None] * total  # a result, or an error message
    notebooks: dict[int, NotebookScript] = {}
    tasks: list[tuple[int, _Task]] = []
    for index, path in enumerate(files):
        try:
            source, notebook = _read(path)
            if notebook is not None:
                notebooks[index] = notebook
            prepared: tuple[CheckResult | str | None, _Task | None] = _prepare(path, source, notebook is None, options, cache)
        except DdpifyError as error:
            prepared = str(error), None
        settled, task = prepared
        if task is None:
            slots[index] = settled
            done += 1
            if progress is not None:
                progress(done, total)
        else:
            tasks.append((index, task))
    for index, computed in _run(tasks, options):
        slots[index] = computed
        done += 1
        if progress is not None:
            progress(done, total)
    outcome = Outcome()
    by_index = dict(tasks)
    for index, answer in enumerate(slots):
        if isinstance(answer, str):
            outcome.errors.append(answer)
            continue
        assert answer is not None
        task = by_index.get(index)
        if task is not None:
            _finish(task, answer, options, cache)
        notebook = notebooks.get(index)
        outcome.results.append(answer if notebook is None else _in_cells(answer, notebook))
    return outcome


def _read(path: Path) -> tuple[source_io.SourceFile, NotebookScript | None]:
    """A file's text; for a notebook, the script of its code cells, and the notebook."""
    if path.suffix != ".ipynb":
        return source_io.read_source(path), None
    from ddpify import notebook

    script = notebook.read(path)
    return source_io.SourceFile(text=script.text, encoding="utf-8", bom=False), script


def _in_cells(result: CheckResult, notebook: NotebookScript) -> CheckResult:
    """Findings at ``nb.ipynb:cell_N`` and the line in that cell; no fix offered (none is applied)."""

    def moved(finding: Finding) -> Finding:
        start = notebook.locate(finding.line)
        if start is None:
            return replace(finding, fix=None)
        end = notebook.locate(finding.end_line) if finding.end_line else None
        same_cell = end is not None and end[0] == start[0]
        return replace(
            finding,
            path=f"{finding.path}:cell_{start[0]}",
            line=start[1],
            end_line=end[1] if same_cell and end else 0,
            end_column=finding.end_column if same_cell else 0,
            fix=None,
        )

    return replace(result, findings=tuple(moved(f) for f in result.findings), fixed=None)


def _prepare(
    path: Path, source: source_io.SourceFile, fixable: bool, options: Options, cache: Cache | None
) -> tuple[CheckResult | None, _Task | None]:
    """A result settled without the engine, or the task for it."""
    config = find_config(path)
    select = options.select or config.select
    # as ruff: a --select on the command line replaces the file's whole selection
    extend = (*options.extend_select, *(() if options.select else config.extend_select))
    ignore = (*options.ignore, *config.ignore, *config.ignored_for(path))
    key = None
    if cache is not None:
        project = project_files.project_digest(source.text, str(path))
        key = cache.key(source.text, select, ignore, options.require_ddp, extend, project)
        hit = cache.get(key, str(path))
        if hit is not None:
            findings, distributed = hit
            can_fix = any(f.fix == "safe" or (f.fix == "unsafe" and options.unsafe_fixes) for f in findings)
            if not (options.fix and fixable and can_fix):  # a fix run with nothing to fix is a check
                return CheckResult(str(path), findings, source.text, None, distributed), None
    if not scope.mentions_distributed(source.text, str(path)) and compiles(source.text, str(path)):
        result = CheckResult(str(path), tuple(scope.not_distributed(str(path), options.require_ddp)), source.text, None, False)
        if cache is not None and key is not None:
            cache.put(key, result.findings, result.distributed)
        return result, None
    return None, _Task(path, source, tuple(select), tuple(ignore), key, fixable, tuple(extend))


def _engine(task: _Task, options: Options) -> CheckResult:
    from ddpify.check.engine import check_source, select_rules

    return check_source(
        task.source.text,
        str(task.path),
        rules=select_rules(task.select, task.ignore, task.extend_select),
        fix=options.fix and task.fixable,
        unsafe_fixes=options.unsafe_fixes,
        require_ddp=options.require_ddp,
    )


def _finish(task: _Task, result: CheckResult, options: Options, cache: Cache | None) -> None:
    """Write a fix back; remember the findings of an unfixed file."""
    if result.fixed is not None:
        if options.write:
            source_io.write_atomically(task.path, source_io.encode(task.source, result.fixed))
        return
    if cache is not None and task.key is not None:
        cache.put(task.key, result.findings, result.distributed)


def _worker(item: tuple[int, _Task, Options]) -> tuple[int, CheckResult | str]:
    index, task, options = item
    try:
        return index, _engine(task, options)
    except DdpifyError as error:
        return index, str(error)
    except Exhausted as exhausted:  # not checked: silence would claim the file clean
        return index, f"{task.path}: not checked: {exhausted}"
    except RecursionError:  # one file's analysis ran out of stack: the other files are still checked
        return index, f"{task.path}: not checked: the analysis recursed too deeply on this file (a ddpify limit; please report it)"


def _run(tasks: list[tuple[int, _Task]], options: Options) -> Iterable[tuple[int, CheckResult | str]]:
    """Engine results as they come (in any order)."""
    context, workers = _pool_plan(len(tasks), options.jobs)
    if context is None:
        for index, task in tasks:
            yield _worker((index, task, options))
        return
    import ddpify.check.engine  # noqa: F401 - imported once here, inherited by forked workers

    # Biggest files first, so no long file starts last and keeps one core busy alone.
    ordered = sorted(tasks, key=lambda item: -len(item[1].source.text))
    with context.Pool(workers, initializer=_ignore_interrupts) as pool:
        yield from pool.imap_unordered(_worker, [(index, task, options) for index, task in ordered], chunksize=1)


def _ignore_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group: the parent alone handles it (one
    line, exit 130) and terminates the pool, so no worker prints a KeyboardInterrupt traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool_plan(count: int, jobs: int | None):
    """The multiprocessing context and worker count for ``count`` files, or (None, 1)."""
    workers = min(jobs or available_cores(), count)
    if workers < 2:
        return None, 1
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and sys.platform != "darwin":
        if count < POOL_MIN_FILES_FORK:
            return None, 1
        return multiprocessing.get_context("fork"), workers
    if count < POOL_MIN_FILES_SPAWN:
        return None, 1
    return multiprocessing.get_context("spawn"), workers


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def missing(paths: Iterable[Path]) -> str | None:
    for path in paths:
        if not path.exists():
            return f"{path}: no such file or directory"
    return None
