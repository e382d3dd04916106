"""A bound on the analysis work spent on one file.

The analyses are per-function fixpoints whose work grows linearly with the program, but a
pre-commit hook must never hang on an input nobody foresaw. Each file's analyses share one
``Budget``; the steps they count (fixpoint evaluations, edges walked) are proportional to
their run time. Past the limit, ``spend`` raises ``Exhausted``: convert then leaves the file
as it is and reports why, check reports the file as not analysed -- the conservative answer,
never a guess from a half-finished analysis.

The limit scales with the file (``STEPS_PER_NODE`` per syntax node, at least ``MINIMUM``), far
above what any real script of the corpora needs (see ``tests/analysis/test_cost.py``).
"""

from __future__ import annotations

import os

STEPS_PER_NODE = 200
MINIMUM = 2_000_000


class Exhausted(Exception):
    """The analyses of one file spent their budget. ``ddpify check`` reports the file as not
    checked (an error line, exit 2: silence would claim it clean); convert leaves it as it is."""

    def __init__(self, steps: int) -> None:
        super().__init__(
            f"the analysis stopped after {steps:,} steps (its work budget); nothing was concluded. "
            "DDPIFY_ANALYSIS_BUDGET=<steps> raises the limit"
        )
        self.steps = steps


class Budget:
    """Steps spent and the limit (``None``: unlimited)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.steps = 0

    @classmethod
    def for_nodes(cls, nodes: int) -> Budget:
        """The budget of a file of ``nodes`` syntax nodes; ``DDPIFY_ANALYSIS_BUDGET`` overrides it."""
        override = os.environ.get("DDPIFY_ANALYSIS_BUDGET")
        if override:
            return cls(int(override))
        return cls(max(MINIMUM, STEPS_PER_NODE * nodes))

    def spend(self, steps: int) -> None:
        self.steps += steps
        if self.limit is not None and self.steps > self.limit:
            raise Exhausted(self.steps)
