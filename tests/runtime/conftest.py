"""Shared fixtures for ddpify.runtime tests: a clean single-process environment, simulated
ranks (launcher variables without a process group), and real torchrun launches."""

from __future__ import annotations

import builtins
import json
import collections
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"
TORCHRUN_TIMEOUT_S = 120

if str(REPO_ROOT) not in sys.path:  # works without `pip install -e .` too
    sys.path.insert(0, str(REPO_ROOT))

import torch  # noqa: E402

from ddpify.runtime import _data, _passes, _rng_records, _seed  # noqa: E402

# Everything a launcher (or a previous test) may have put in the environment that would change
# what detect_env() or setup() see.
LAUNCHER_VARS = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "ROLE_RANK",
    "ROLE_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "DDPIFY_INIT_TIMEOUT",
    # srun and mpirun (the runtime reads these too, see ddpify.runtime._env)
    "SLURM_STEP_ID",
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
)


@pytest.fixture(autouse=True)
def clean_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Single process, fresh ddpify seed/announcement state, the global RNG and ``print``
    (``setup()`` on a rank other than 0 silences it) restored, so tests cannot leak into each
    other whatever order xdist runs them in."""
    for name in LAUNCHER_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_rng_records, "records", [])
    monkeypatch.setattr(_seed, "_switched", False)
    monkeypatch.setattr(_seed, "_generators", {})
    monkeypatch.setattr(_data, "_announced", set())
    monkeypatch.setattr(_passes, "_next", {})
    monkeypatch.setattr(_passes, "_held", collections.OrderedDict())
    monkeypatch.setattr(builtins, "print", builtins.print)
    with torch.random.fork_rng(devices=[]):
        yield


@pytest.fixture
def as_rank(monkeypatch: pytest.MonkeyPatch) -> Callable[[int, int], None]:
    """Pretend to be rank ``rank`` of ``world`` (launcher variables only, no process group):
    enough for everything that only needs rank()/world_size(), e.g. building loaders."""

    def apply(rank: int, world: int) -> None:
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("LOCAL_RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", str(world))
        monkeypatch.setenv("LOCAL_WORLD_SIZE", str(world))

    return apply


def run_torchrun(
    script: str, out_dir: Path, nproc: int = 2, extra_env: Optional[dict[str, str]] = None
) -> list[dict]:
    """Run tests/runtime/scripts/<script> under torchrun on CPU and return each rank's JSON.

    ``--standalone`` picks a free rendezvous port, so launches can run in parallel (xdist).
    Each rank must write ``out_dir/rank<RANK>.json``; a non-zero exit fails with the output.
    """
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env.update(
        CUDA_VISIBLE_DEVICES="",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")])),
    )
    env.update(extra_env or {})
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        str(SCRIPTS_DIR / script),
        str(out_dir),
    ]
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=str(out_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # so a hung run can be killed with all its workers
    )
    try:
        output, _ = proc.communicate(timeout=TORCHRUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"torchrun {script} timed out after {TORCHRUN_TIMEOUT_S}s:\n{output}")
    written = all((out_dir / f"rank{r}.json").exists() for r in range(nproc))
    # gloo's own teardown may abort after every rank wrote its result (about one loaded CPU run
    # in a thousand, as in tests/e2e/harness.py): what the tests judge had all happened by then
    aborted_after_the_end = written and "terminate called without an active exception" in output
    if proc.returncode != 0 and not aborted_after_the_end:
        pytest.fail(f"torchrun {script} exited with {proc.returncode}:\n{output}")
    results = []
    for r in range(nproc):
        path = out_dir / f"rank{r}.json"
        assert path.exists(), f"rank {r} wrote no result; output:\n{output}"
        results.append(json.loads(path.read_text()))
    return results


@pytest.fixture(scope="session")
def torchrun_results(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[dict]]:
    """``torchrun_results("ddp_data.py")`` -> per-rank results, launched once per test session.

    Many small tests assert on one launch (each launch costs seconds). Under pytest-xdist the
    workers share the session's temp root and a file lock, so the launch still happens once.
    """
    from filelock import FileLock  # a torch dependency, so always present with torch

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by all workers of this session, unique to the session
    cache: dict[str, list[dict]] = {}

    def get(script: str) -> list[dict]:
        if script not in cache:
            stem = Path(script).stem
            out_dir = root / f"torchrun-{stem}"
            done = root / f"torchrun-{stem}.results.json"
            with FileLock(str(root / f"torchrun-{stem}.lock")):
                if done.exists():
                    cache[script] = json.loads(done.read_text())
                else:
                    shutil.rmtree(out_dir, ignore_errors=True)  # all a failed earlier attempt left (files it wrote)
                    out_dir.mkdir()
                    results = run_torchrun(script, out_dir)
                    done.write_text(json.dumps(results))
                    cache[script] = results
        return cache[script]

    return get
