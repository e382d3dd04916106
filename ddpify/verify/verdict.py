"""The verdict: one row per property, PASS / FAIL / n/a with the evidence, as a table and JSON.

The judges (``judge_data``, ``judge_model``, ``judge_run``) each read the records and return
their rows; a property that could not be observed is n/a and says why, never PASS.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from ddpify.verify.records import Outcome, Records
from ddpify.verify.row import FAIL, NA, PASS, TITLES, Row

__all__ = ["PASS", "FAIL", "NA", "Row", "TITLES", "judge", "render", "exit_code", "as_json"]


def judge(records: Records, outcome: Outcome, single: Records | None = None) -> list[Row]:
    """Every row, in table order. ``single``: the records of the same script as one process
    (``--compare``), for the global batch."""
    from ddpify.verify import judge_data, judge_model, judge_run

    rows = [
        *judge_run.rows(records, outcome),
        *judge_data.rows(records, single),
        *judge_model.rows(records),
    ]
    order = list(TITLES)
    return sorted(rows, key=lambda row: order.index(row.key))


def render(rows: list[Row], header: str) -> str:
    """A plain-text table (pasteable, no colour), then one summary line."""
    width = max(len(row.title) for row in rows)
    lines = [header, f"{'property':<{width}}  verdict  evidence"]
    lines += [f"{row.title:<{width}}  {row.status:<7}  {row.evidence}" for row in rows]
    failed = [row.title for row in rows if row.status == FAIL]
    counts = f"{sum(r.status == PASS for r in rows)} pass, {len(failed)} fail, {sum(r.status == NA for r in rows)} n/a"
    lines.append(f"verdict: {'FAIL' if failed else 'PASS'} ({counts})")
    return "\n".join(lines) + "\n"


def exit_code(rows: list[Row]) -> int:
    """0 when every applicable property passes, 1 when one fails."""
    return 1 if any(row.status == FAIL for row in rows) else 0


def as_json(rows: list[Row], header: str) -> str:
    return json.dumps({"run": header, "rows": [{**asdict(row), "title": row.title} for row in rows]}, indent=2) + "\n"
