"""Running a script for ``ddpify verify``: convert it first when it is a single-GPU script,
launch it under torchrun with the recorder loaded (``site/`` first on PYTHONPATH), and kill it
when it stops making progress. No torch here: this is the ``ddpify`` process.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

from ddpify.errors import DdpifyError
from ddpify.verify.records import Outcome
from ddpify.verify.source_lines import LineMap

__all__ = ["needs_conversion", "prepare", "launch", "gpu_count"]

SITE_DIR = Path(__file__).resolve().parent / "site"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds ddpify/
# Variables of a launcher this command may itself run under; the ranks must see only their own.
LAUNCHER_VARS = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "SLURM_STEP_ID",
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
)
GRACE_S = 3.0  # between SIGTERM and SIGKILL when a run is killed
STARTUP_S = 120.0  # the least time given to every rank to start (import torch) before --timeout applies
_DDP_MARKERS = re.compile(r"init_process_group|^\s*(?:import|from)\s+ddpify\b|_ddpify_embedded_runtime", re.M)


def needs_conversion(source: str) -> bool:
    """A single-GPU script: it neither starts a process group nor uses ddpify's runtime."""
    return _DDP_MARKERS.search(source) is None


def prepare(script: Path, folder: Path) -> tuple[Path, LineMap | None]:
    """The script to run and, when it is a conversion (written into ``folder``, never next to
    the user's file), its lines mapped back to the user's."""
    source = script.read_text(encoding="utf-8")
    if not needs_conversion(source):
        return script, None
    from ddpify.api import convert_source

    result = convert_source(source, filename=str(script))
    if not result.changed:
        return script, None
    converted = folder / script.name
    converted.write_text(result.output, encoding="utf-8")
    return converted, LineMap.between(script.name, source, result.output)


def gpu_count() -> int:
    """GPUs this command may hand to the ranks (``nvidia-smi -L``, limited by
    CUDA_VISIBLE_DEVICES); 0 without a driver. Asked without importing torch."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and not visible.strip():
        return 0
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 0
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    count = sum(line.startswith("GPU ") for line in listed.splitlines())
    return min(count, len([v for v in visible.split(",") if v.strip()])) if visible else count


def _environment(records: Path, steps: int | None, script_dir: Path | None, cpu_only: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    paths = [str(SITE_DIR), str(PACKAGE_ROOT), *([str(script_dir)] if script_dir else []), env.get("PYTHONPATH", "")]
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        PYTHONUNBUFFERED="1",
        DDPIFY_VERIFY="1",
        DDPIFY_VERIFY_DIR=str(records),
    )
    env.setdefault("OMP_NUM_THREADS", "1")
    if steps is not None:
        env["DDPIFY_VERIFY_STEPS"] = str(steps)
    if cpu_only:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _progress(records: Path) -> tuple[int, int]:
    """(ranks started, bytes recorded so far): the bytes grow while the run makes progress."""
    files = [p for p in records.glob("rank*.jsonl") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def _rank_pids(records: Path) -> list[int]:
    pids = []
    for path in records.glob("rank*.jsonl"):
        for match in re.finditer(r'"e": "start", "pid": (\d+)', path.read_text(errors="replace")):
            pids.append(int(match.group(1)))
    return pids


def _kill(process: subprocess.Popen[bytes], records: Path) -> None:
    """The ranks first (stuck in a collective, they may not heed torchrun), then torchrun."""
    for pid in _rank_pids(records):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except OSError:
            return
        try:
            process.wait(timeout=GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def launch(
    script: Path,
    args: list[str],
    *,
    nproc: int,
    steps: int | None,
    timeout: float,
    records: Path,
    quiet: bool,
    script_dir: Path | None,
) -> Outcome:
    """Run ``script`` under ``torchrun --standalone --nproc_per_node=nproc``; the run is killed
    after ``timeout`` seconds in which neither its output nor its records grew (at least
    ``STARTUP_S`` until every rank started)."""
    gpus = gpu_count()
    cpu_only = gpus < nproc
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", str(script), *args]
    records.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            env=_environment(records, steps, script_dir, cpu_only),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so a hung run can be killed with its workers
        )
    except OSError as exc:
        raise DdpifyError(f"cannot start torchrun: {exc}") from None
    tail: deque[bytes] = deque(maxlen=200)
    last_output = [time.monotonic()]

    def pump() -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            tail.append(line)
            last_output[0] = time.monotonic()
            if not quiet:
                sys.stderr.buffer.write(line)
                sys.stderr.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    size, last_change = -1, time.monotonic()
    while process.poll() is None:
        time.sleep(0.2)
        now = time.monotonic()
        ranks, current = _progress(records)
        if current != size:
            size, last_change = current, now
        limit = timeout if ranks >= nproc else max(timeout, STARTUP_S)
        if now - max(last_change, last_output[0]) > limit:
            timed_out = True
            _kill(process, records)
            break
    process.wait()
    reader.join(timeout=5)
    return Outcome(
        returncode=process.returncode,
        timed_out=timed_out,
        elapsed=time.monotonic() - started,
        output_tail=b"".join(tail).decode("utf-8", "replace")[-8000:],
        nproc=nproc,
        device="CPU, gloo" if cpu_only else "one GPU per process",
        steps=steps,
        timeout=timeout,
    )
