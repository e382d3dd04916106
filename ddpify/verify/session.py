"""One ``ddpify verify`` invocation: prepare the script, run it (and, with ``compare``, run it
again as one process), judge the records. Everything it writes lives in a temporary folder
that is removed afterwards; the user's files are never touched."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddpify.errors import DdpifyError
from ddpify.verify import launch, records, verdict

__all__ = ["Verdict", "verify"]


@dataclass
class Verdict:
    header: str
    rows: list[verdict.Row]
    outcome: records.Outcome

    def table(self) -> str:
        return verdict.render(self.rows, self.header)

    @property
    def exit_code(self) -> int:
        return verdict.exit_code(self.rows)


def verify(
    script: Path,
    args: list[str],
    *,
    nproc: int = 2,
    steps: int | None = None,
    timeout: float = 300.0,
    compare: bool = False,
    quiet: bool = False,
) -> Verdict:
    """Run ``script`` on ``nproc`` processes and judge it. DdpifyError for launch problems
    (no such script, no rank started)."""
    if not script.is_file():
        raise DdpifyError(f"{script}: no such file")
    folder = Path(tempfile.mkdtemp(prefix="ddpify-verify-"))
    try:
        runnable, lines = launch.prepare(script, folder)
        script_dir = script.resolve().parent if lines is not None else None
        options: dict[str, Any] = {"steps": steps, "timeout": timeout, "quiet": quiet, "script_dir": script_dir}
        outcome = launch.launch(runnable, args, nproc=nproc, records=folder / "records", **options)
        found = records.load(folder / "records", nproc)
        if not found.started():
            tail = outcome.output_tail.strip()[-3000:]
            raise DdpifyError(f"no rank started (torchrun exit code {outcome.returncode}):\n{tail}")
        single = None
        if compare:
            alone = launch.launch(runnable, args, nproc=1, records=folder / "single", **options)
            single = records.load(folder / "single", 1) if alone.returncode == 0 else None
        what = f"{script} (converted by ddpify first)" if lines is not None else str(script)
        stop = f", stopped after {steps} steps" if steps else ""
        header = f"ddpify verify: {what} on {nproc} processes ({outcome.device}){stop}, {outcome.elapsed:.1f} s"
        if compare:
            header += ", compared with one process" if single is not None else ", the one-process run failed: not compared"
        rows = verdict.judge(found, outcome, single)
        if lines is not None:
            rows = [dataclasses.replace(row, evidence=lines.relabel(row.evidence)) for row in rows]
        return Verdict(header, rows, outcome)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
