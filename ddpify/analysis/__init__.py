"""The DDP analysis shared by the converter (``ddpify.convert``) and the linter
(``ddpify.check``): one module per concept, each the only definition of it.

``Analysis(wrapper)`` is built once per file; each concept is computed on first use and
cached, so a rule or planner that never asks about data flow never pays for it. When an
analysis cannot establish a fact it answers "unknown", and both sides then report instead of
acting.
"""

from __future__ import annotations

from libcst.metadata import MetadataWrapper

from ddpify.analysis.source import Source


class Analysis:
    """Every concept of one file, computed on first use."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.source = Source(wrapper)
