"""The DDP analysis shared by the converter (``ddpify.convert``) and the linter
(``ddpify.check``): one module per concept, each the only definition of it.

``Analysis(wrapper)`` is built once per file; each concept is computed on first use and
cached, so a rule or planner that never asks about data flow never pays for it. When an
analysis cannot establish a fact it answers "unknown", and both sides then report instead of
acting.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from libcst.metadata import MetadataWrapper

from ddpify.analysis.source import Source

if TYPE_CHECKING:
    from ddpify.analysis.context import Context
    from ddpify.analysis.dataflow import DataFlow
    from ddpify.analysis.loops import Loops
    from ddpify.analysis.models import ModelFlow
    from ddpify.analysis.rank_tests import RankTests


class Analysis:
    """Every concept of one file, computed on first use."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.source = Source(wrapper)

    @functools.cached_property
    def dataflow(self) -> DataFlow:
        """Batch sources, where their batches go, and their roles (train / eval / unknown)."""
        from ddpify.analysis.dataflow import DataFlow

        return DataFlow(self.source)

    @functools.cached_property
    def models(self) -> ModelFlow:
        """Trained and wrapped models: construction, moves, loads, wraps, calls, placement."""
        from ddpify.analysis.models import ModelFlow

        return ModelFlow(self.source, self.dataflow)

    @functools.cached_property
    def rank_tests(self) -> RankTests:
        """Which ranks an expression selects (``rank == 0``, ``args.local_rank in [-1, 0]``)."""
        from ddpify.analysis.rank_tests import RankTests

        # a flag's assignments are weighed by where they run, which the context knows
        return RankTests(self.source, where=lambda node: self.context.local(node))

    @functools.cached_property
    def context(self) -> Context:
        """Which ranks / branch / process run a statement; prints silenced or tagged per rank."""
        from ddpify.analysis.context import Context

        return Context(self.source, self.rank_tests, lambda: self.dataflow)

    @functools.cached_property
    def loops(self) -> Loops:
        """Epoch loops and the loaders a loop iterates."""
        from ddpify.analysis.loops import Loops

        return Loops(self.source)
