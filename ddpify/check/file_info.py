"""``FileInfo``: one file as every rule of a check sees it (its own module, so rules and the
engine that runs them both import it without a cycle)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import MetadataWrapper

from ddpify.analysis import Analysis, importer_analysis
from ddpify.convert import names
from ddpify.convert.facts import Facts, collect_facts
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code

if TYPE_CHECKING:
    from ddpify.analysis.context import Context
    from ddpify.analysis.source import Source


@dataclass
class FileInfo:
    """What the rules of one file share; expensive parts are computed on first use."""

    path: str
    source: str
    wrapper: MetadataWrapper
    _facts: Facts | None = field(default=None, repr=False)
    _analysis: Analysis | None = field(default=None, repr=False)
    memo: dict[str, object] = field(default_factory=dict, repr=False)  # per-file answers rules share

    @property
    def module(self) -> cst.Module:
        return self.wrapper.module

    @property
    def facts(self) -> Facts:
        """The converter's own analysis (loaders and their roles, trained models, epoch loops),
        so lint rules judge a script exactly as the converter would convert it."""
        if self._facts is None:
            self._facts = collect_facts(self.wrapper, self.analysis)
        return self._facts

    @property
    def analysis(self) -> Analysis:
        """The shared DDP analysis of this file (rank tests, execution contexts, loops), built
        from the same wrapper as the rules' metadata, so its nodes are the rules' nodes; the
        path lets it read the project modules the file imports."""
        if self._analysis is None:
            self._analysis = Analysis(self.wrapper, self.path)
        return self._analysis

    @property
    def already_converted(self) -> bool:
        """``facts.already_converted`` (the script imports ddpify.runtime), without the fact pass."""
        if self._facts is not None:
            return self._facts.already_converted
        for node in cstutil.of_types(self.module, cst.Import, cst.ImportFrom):
            if isinstance(node, cst.Import):
                modules = [code(alias.name) for alias in node.names]
            elif isinstance(node, cst.ImportFrom) and node.module is not None and node.relative == ():
                modules = [code(node.module)]
            else:
                continue
            if any(m == names.RUNTIME_MODULE or m.startswith(names.RUNTIME_MODULE + ".") for m in modules):
                return True
        return False


def read_with_imports(file: Path) -> tuple[Source, Context] | None:
    """Another file of the project, read with its imports (once per version of it): its source
    and context, for what a rule asks of the files around the checked one."""
    try:
        analysis = importer_analysis(file, file.stat().st_mtime_ns, 1)
    except OSError:
        return None
    return (analysis.source, analysis.context) if analysis is not None else None
