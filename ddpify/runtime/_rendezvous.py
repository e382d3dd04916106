"""Where ranks meet: MASTER_ADDR / MASTER_PORT for launchers that do not export them.

torchrun sets both itself. srun and mpirun start the ranks but say nothing about a rendezvous,
yet ``init_process_group("env://")`` needs one, so every rank derives the same address and
port from variables all ranks of the job share. Values the user set always win.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping

from ._env import Env
from ._hostlist import expand_hostlist

__all__ = ["rendezvous_defaults", "port_for_job"]

# Unprivileged and below Linux's default ephemeral range (32768+), so a derived port does not
# collide with the client ports the kernel hands out.
PORT_BASE = 20000
PORT_SPAN = 10000

_SLURM_NODELISTS = ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
_SLURM_JOB_IDS = ("SLURM_JOB_ID", "SLURM_JOBID")
# Job identifiers that mpirun exports identically to every rank of one job.
_MPI_JOB_IDS = ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid")


def port_for_job(job_id: str) -> int:
    """``PORT_BASE + job_id % PORT_SPAN`` for numeric ids (predictable), a hash for others."""
    number = int(job_id) if job_id.isdigit() else zlib.crc32(job_id.encode())
    return PORT_BASE + number % PORT_SPAN


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str]:
    """(name, value) of the first of ``names`` that is set and non-empty, else ("", "")."""
    for name in names:
        if environ.get(name, "").strip():
            return name, environ[name].strip()
    return "", ""


def _slurm(environ: Mapping[str, str]) -> tuple[str, str]:
    name, nodelist = _first(environ, _SLURM_NODELISTS)
    _, job_id = _first(environ, _SLURM_JOB_IDS)
    needed = (("SLURM_STEP_NODELIST or SLURM_JOB_NODELIST", nodelist, "MASTER_ADDR"), ("SLURM_JOB_ID", job_id, "MASTER_PORT"))
    missing = [(what, override) for what, value, override in needed if not value and override not in environ]
    if missing:
        raise RuntimeError(
            f"ddpify: under srun the rendezvous comes from the job, but "
            f"{' and '.join(what for what, _ in missing)} {'is' if len(missing) == 1 else 'are'} "
            f"missing; set {' and '.join(override for _, override in missing)} instead."
        )
    try:
        address = expand_hostlist(nodelist)[0] if nodelist else ""
    except ValueError as error:
        raise RuntimeError(f"ddpify: cannot read {name}: {error}; set MASTER_ADDR.") from None
    return address, str(port_for_job(job_id)) if job_id else ""


def _mpi(env: Env, environ: Mapping[str, str]) -> tuple[str, str]:
    single_node = env.local_world_size == env.world_size
    if "MASTER_ADDR" not in environ and not single_node:
        raise RuntimeError(
            "ddpify: mpirun across nodes does not say where rank 0 runs, so MASTER_ADDR is "
            "missing; export it to all ranks, e.g. mpirun -x MASTER_ADDR=<first host>."
        )
    _, job_id = _first(environ, _MPI_JOB_IDS)
    if not job_id and single_node:
        # All ranks on one node are children of the same launcher daemon (mpirun / orted or
        # mpiexec.hydra's proxy), so its pid is a value every rank agrees on.
        job_id = str(os.getppid())
    if not job_id and "MASTER_PORT" not in environ:
        raise RuntimeError(
            f"ddpify: mpirun exported no job id ({', '.join(_MPI_JOB_IDS)}), so MASTER_PORT is "
            "missing; export the same free port to all ranks, e.g. mpirun -x MASTER_PORT=29500."
        )
    return "127.0.0.1", str(port_for_job(job_id)) if job_id else ""


def rendezvous_defaults(launcher: str, env: Env, environ: Mapping[str, str]) -> dict[str, str]:
    """The MASTER_ADDR / MASTER_PORT values to export before ``env://`` init (only those not
    already set); empty for torchrun, which sets them, and for a single process."""
    if env.world_size <= 1 or launcher not in ("slurm", "openmpi", "mpich"):
        return {}
    address, port = _slurm(environ) if launcher == "slurm" else _mpi(env, environ)
    wanted = {"MASTER_ADDR": address, "MASTER_PORT": port}
    return {name: value for name, value in wanted.items() if name not in environ}
