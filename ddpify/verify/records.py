"""The recorder's JSON lines read back, per rank, with the queries the judges share. No torch:
this runs in the ``ddpify verify`` process."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Outcome", "Records", "load"]

Event = dict[str, Any]


@dataclass
class Outcome:
    """How the launch went: exit status, whether the watchdog killed it, what it printed last."""

    returncode: int
    timed_out: bool
    elapsed: float
    output_tail: str
    nproc: int
    device: str  # "CPU, gloo" or "one GPU per process"
    steps: int | None
    timeout: float


@dataclass
class Records:
    """Every rank's events, in the order they happened."""

    world: int
    events: dict[int, list[Event]] = field(default_factory=dict)

    def of(self, rank: int, kind: str) -> list[Event]:
        return [e for e in self.events.get(rank, []) if e.get("e") == kind]

    def every(self, kind: str) -> dict[int, list[Event]]:
        """``kind`` events of every rank that recorded anything (rank -> events)."""
        return {rank: self.of(rank, kind) for rank in sorted(self.events)}

    @property
    def ranks(self) -> list[int]:
        return sorted(self.events)

    def started(self) -> list[int]:
        return [r for r in self.ranks if self.of(r, "start")]

    def ended(self) -> list[int]:
        return [r for r in self.ranks if self.of(r, "end")]

    def guards(self, row: str) -> list[str]:
        """Messages of the guard rails (runtime or recorder) that fired for ``row``, once each."""
        messages: list[str] = []
        for rank in self.ranks:
            for event in self.events[rank]:
                kind = event.get("e")
                if (kind == "guard" or kind == "error") and event.get("row") == row:
                    message = event.get("message", "")
                    if message not in messages:
                        messages.append(message)
        return messages

    def loaders(self) -> dict[int, Event]:
        """Loader descriptions by id (rank 0's, else the first rank that has them)."""
        out: dict[int, Event] = {}
        for rank in self.ranks:
            for event in self.of(rank, "loader"):
                out.setdefault(event["id"], event)
        return out

    def training_passes(self) -> dict[int, dict[int, dict[int, Event]]]:
        """loader id -> pass number -> rank -> pass event, for the passes that fed an optimizer
        step on some rank: evaluation loaders, and a training loader's extra passes that fed
        none (``next(iter(loader))`` to print a batch's shape), are left out."""
        passes: dict[int, dict[int, dict[int, Event]]] = {}
        for rank in self.ranks:
            for event in self.of(rank, "pass"):
                passes.setdefault(event["loader"], {}).setdefault(event["n"], {})[rank] = event
        training = {
            loader: {n: per_rank for n, per_rank in by_number.items() if any(e.get("steps", 0) > 0 for e in per_rank.values())}
            for loader, by_number in passes.items()
        }
        return {loader: by_number for loader, by_number in training.items() if by_number}

    def main_steps(self, rank: int) -> list[Event]:
        """Steps of the first optimizer that stepped: the training steps ``--steps`` counts."""
        return [e for e in self.of(rank, "step") if e.get("main")]

    def optimizer_names(self, rank: int) -> dict[int, str]:
        """Optimizer id -> ``SGD (train.py:40)`` (its kind and where it first stepped)."""
        return {e["id"]: f"{e['kind']} ({e['site']})" for e in self.of(rank, "optimizer")}

    def count_steps(self, rank: int, *, wrapped_only: bool = False) -> str:
        """``8 optimizer steps``: every optimizer.step() call on ``rank`` (of optimizers that
        update a wrapped model, with ``wrapped_only``), split by optimizer when there are several.
        The one way rows count steps, so two rows never count different things."""
        per: dict[int, int] = {}
        for step in self.of(rank, "step"):
            if step.get("w") or not wrapped_only:
                per[step["opt"]] = per.get(step["opt"], 0) + 1
        total = f"{sum(per.values())} optimizer step{'s' if sum(per.values()) != 1 else ''}"
        if len(per) < 2:
            return total
        names = self.optimizer_names(rank)
        split = ", ".join(f"{n} of {names.get(ident, f'optimizer #{ident}')}" for ident, n in per.items())
        return f"{total} ({split})"

    def main_optimizer(self, rank: int) -> str | None:
        """``SGD (train.py:40), the first of 2 optimizers to step`` when several stepped (their
        training steps are its steps), else None."""
        names = self.optimizer_names(rank)
        first = next((e["opt"] for e in self.main_steps(rank)), None)
        if len(names) < 2 or first is None:
            return None
        return f"{names[first]}, the first of {len(names)} optimizers to step"


def load(folder: Path, world: int) -> Records:
    """Read ``rank<R>.jsonl`` files; a line cut short by a killed process is skipped."""
    records = Records(world=world)
    for path in sorted(folder.glob("rank*.jsonl")):
        try:
            rank = int(path.stem[len("rank") :])
        except ValueError:
            continue
        events: list[Event] = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        restarts = [i for i, e in enumerate(events) if e.get("e") == "restart"]
        records.events[rank] = events[restarts[-1] + 1 :] if restarts else events  # the run after a restart is the run
    return records
