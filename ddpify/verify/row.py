"""A verdict row: one property, PASS / FAIL / n/a, and the evidence. Shared by the judges and
``verdict`` (which orders, renders and scores the rows)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PASS", "FAIL", "NA", "Row", "TITLES"]

PASS, FAIL, NA = "PASS", "FAIL", "n/a"

# Row keys in table order, with their titles. GuardError.row values are these keys.
TITLES = {
    "run": "script runs to the end on every rank",
    "shards": "training data: shards disjoint, cover the data",
    "reshuffle": "training data: reshuffled each epoch, one order",
    "batch": "training data: global batch per step",
    "draws": "random index sampling differs per rank",
    "wrapped": "every trained model wrapped in DDP",
    "forward": "forward through the wrapper each step",
    "params": "parameters identical on all ranks",
    "checkpoints": "checkpoints: one rank, plain state dicts",
    "writes": "file writes and log lines from one rank",
    "rng": "per-rank RNG streams after init",
    "init": "model init and generated data identical",
    "hang": "no hang: same collectives on every rank",
}


@dataclass(frozen=True)
class Row:
    key: str
    status: str
    evidence: str

    @property
    def title(self) -> str:
        return TITLES[self.key]
