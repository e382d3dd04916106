"""The converted tiny script really runs with 2 CPU processes under each launcher: torchrun
(one node; two "nodes" with c10d rendezvous), Open MPI's mpirun, and the environment srun
gives its tasks. Each run must show disjoint shards covering the data and equal final
parameters on both ranks. Every launcher also runs the ``--standalone`` output in an
environment where ``import ddpify`` fails.

How ddpify is made unimportable: a directory holding a package ``ddpify`` whose
``__init__`` raises ImportError goes first on PYTHONPATH, ahead of the editable install's
``.pth`` entry, and the script runs from a temporary directory. Any ``import ddpify`` or
``import ddpify.runtime`` in any process of the run then fails loudly (checked first), while
torch and the trace shim load as usual.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source
from ddpify.launch import LaunchSpec, render
from ddpify.runtime._rendezvous import PORT_BASE, PORT_SPAN

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from harness import SHIM_DIR, RunResult, run_commands, run_script  # noqa: E402

TINY = Path(__file__).resolve().parent / "data" / "tiny_train.py"
DATASET_LEN = 64
TIMEOUT_S = 120
BIN_DIR = str(Path(sys.executable).parent)  # `torchrun` and `python` of this interpreter


def _free_port(low: int = 0, high: int = 0) -> int:
    """A port nothing listens on now (in [low, high) when given)."""
    for _ in range(200):
        port = random.randrange(low, high) if high else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise RuntimeError("no free port")


@pytest.fixture(params=["plain", "standalone"])
def converted(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The converted script in its own directory, and the environment to run it in."""
    standalone = request.param == "standalone"
    script = tmp_path / "train_ddp.py"
    script.write_text(convert_source(TINY.read_text(), standalone=standalone).output)
    env = {"PATH": BIN_DIR + os.pathsep + os.environ.get("PATH", "")}
    if standalone:
        blocker = tmp_path / "no_ddpify" / "ddpify"
        blocker.mkdir(parents=True)
        (blocker / "__init__.py").write_text('raise ImportError("ddpify is blocked: standalone test")\n')
        env["PYTHONPATH"] = os.pathsep.join([str(SHIM_DIR), str(blocker.parent)])
        probe = subprocess.run([sys.executable, "-c", "import ddpify.runtime"], cwd=tmp_path,
                               env={**os.environ, **env}, capture_output=True, text=True)
        assert probe.returncode != 0 and "ddpify is blocked" in probe.stderr, "ddpify is still importable"
    return script, env


def _assert_trained_correctly(run: RunResult) -> None:
    run.assert_ok()
    loader = run.loader_seq(DATASET_LEN)
    for epoch in (0, 1):
        run.assert_disjoint_cover(loader, epoch, dataset_len=DATASET_LEN)
    run.assert_reshuffled(loader)
    run.assert_params_equal()
    run.assert_only_rank0_saves()


def _args(script: Path) -> list[str]:
    return ["--epochs", "2", "--out-dir", str(script.parent)]


@pytest.mark.torchrun
def test_torchrun_one_node(converted: tuple[Path, dict[str, str]]) -> None:
    script, env = converted
    if "PYTHONPATH" not in env:
        pytest.skip("the plain converted scripts run under torchrun in tests/e2e")
    _assert_trained_correctly(run_script(script, _args(script), nproc=2, cwd=script.parent, env=env, timeout=TIMEOUT_S))


@pytest.mark.torchrun
def test_torchrun_two_nodes_with_c10d_rendezvous(converted: tuple[Path, dict[str, str]]) -> None:
    """The generated multi-node script, started twice on loopback as two one-process nodes."""
    script, env = converted
    launcher = script.parent / "launch.sh"
    launcher.write_text(render(LaunchSpec("torchrun", str(script), tuple(_args(script)), nodes=2, procs_per_node=1)))
    rendezvous = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "RDZV_ID": script.parent.name}
    node = (["bash", str(launcher)], {})
    run = run_commands([node, node], world_size=2, cwd=script.parent, env={**env, **rendezvous}, timeout=TIMEOUT_S)
    _assert_trained_correctly(run)


@pytest.mark.torchrun
@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI's mpirun is not installed (.ci/run installs it)")
def test_mpirun_two_processes(converted: tuple[Path, dict[str, str]]) -> None:
    """The generated mpirun script; the ranks find each other on 127.0.0.1 and a port from the
    MPI job id, which the runtime derives (nothing here sets MASTER_ADDR/PORT)."""
    script, env = converted
    launcher = script.parent / "launch.sh"
    launcher.write_text(render(LaunchSpec("mpirun", str(script), tuple(_args(script)), procs_per_node=2)))
    # Open MPI refuses root unless told (CI runs as root) and counts slots by cores.
    mpi = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    run = run_commands([(["bash", str(launcher)], {})], world_size=2, cwd=script.parent,
                       env={**env, **mpi}, timeout=TIMEOUT_S)
    _assert_trained_correctly(run)


@pytest.mark.torchrun
def test_srun_environment_two_tasks(converted: tuple[Path, dict[str, str]]) -> None:
    """Two plain python processes with the variables srun gives the tasks of a one-node,
    two-task step; the rendezvous comes from the node list and the job id."""
    script, env = converted
    port = _free_port(PORT_BASE, PORT_BASE + PORT_SPAN)
    job = {"SLURM_JOB_ID": str(PORT_SPAN * 7 + port - PORT_BASE), "SLURM_STEP_ID": "0", "SLURM_NTASKS": "2",
           "SLURM_NODEID": "0", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_TASKS_PER_NODE": "2",
           "SLURM_STEP_NODELIST": "localhost", "SLURM_JOB_NODELIST": "localhost,spare[01-02]"}
    tasks = [([sys.executable, str(script), *_args(script)], {"SLURM_PROCID": str(r), "SLURM_LOCALID": str(r)})
             for r in (0, 1)]
    run = run_commands(tasks, world_size=2, cwd=script.parent, env={**env, **job}, timeout=TIMEOUT_S)
    _assert_trained_correctly(run)
