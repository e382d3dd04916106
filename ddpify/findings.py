"""What a conversion did and what it left to a human: plain, frozen, picklable records."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Change:
    """A rewrite the converter applied; ``line`` is 1-based in the input."""

    line: int
    what: str


@dataclass(frozen=True, order=True)
class ManualItem:
    """Something recognised but not rewritten safely: why, and what to do by hand."""

    line: int
    why: str
    todo: str


@dataclass(frozen=True)
class ConversionResult:
    """The converted source plus the report about it. ``already_converted``: the input imports
    ``ddpify.runtime`` (a converted script), so an unchanged output means "done before", not
    "no training code". ``trained_elsewhere``: the script trains nothing itself and hands a
    model it builds to a training function of another file (``ddpify.companions`` converts it).
    ``wraps_for_modules``: the script wraps models and hands them to a trainer of another file
    that trains them on data of its own (that module is converted alongside, told so).
    ``trains_here``: the script builds an optimizer or wraps a model itself; one that does
    neither (it builds loaders and hands them on) may have its training in the project's modules.
    ``shards_at_run_time``: some of its loaders are sharded for the passes that train, decided by
    the run (``only_when_training``): what it hands to such modules is sharded there."""

    source: str
    output: str
    changes: tuple[Change, ...] = field(default=())
    manual: tuple[ManualItem, ...] = field(default=())
    already_converted: bool = False
    trained_elsewhere: bool = False
    wraps_for_modules: bool = False
    trains_here: bool = True
    shards_at_run_time: bool = False

    @property
    def changed(self) -> bool:
        return self.source != self.output


@dataclass(frozen=True, order=True)
class Finding:
    """One lint finding, 1-based line and column. ``fix`` is "safe", "unsafe" or None."""

    path: str
    line: int
    column: int
    code: str
    message: str
    fix: str | None = None
    end_line: int = 0
    end_column: int = 0


@dataclass(frozen=True)
class CheckResult:
    """Findings for one file; ``fixed`` is the fixed source when fixes were applied."""

    path: str
    findings: tuple[Finding, ...]
    source: str
    fixed: str | None = None
    distributed: bool = True
