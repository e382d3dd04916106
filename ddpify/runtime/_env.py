"""Launcher detection: which process am I, and how many are there?

Everything here reads environment variables only and never touches ``torch.distributed``, so
``rank()`` and friends answer correctly before ``setup()`` has run (for example while a script
parses its arguments) and in a plain ``python train.py`` run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

__all__ = ["Env", "Launcher", "detect_env", "detect_launcher", "LAUNCHERS"]


@dataclass(frozen=True)
class Env:
    """Where this process sits in the job; frozen so callers can share and cache it safely."""

    rank: int
    local_rank: int
    world_size: int
    local_world_size: int


@dataclass(frozen=True)
class Launcher:
    """The variables one launcher exports for the four numbers of :class:`Env`.

    ``marker`` is the variable whose presence says "this launcher started me"; the others are
    then required, so a half-set environment is an error instead of a silent single process.
    ``local_world`` is ``None`` where the launcher has no such variable (see ``_slurm_local_world``).
    """

    name: str
    marker: str
    rank: str
    local_rank: str
    world: str
    local_world: Optional[str]


# The documented detection order: the first launcher whose marker is set wins. torchrun comes
# first because `srun torchrun` and `mpirun torchrun` leave the outer launcher's variables in
# every worker, and torchrun's numbers are the ones that describe the worker. SLURM is keyed
# on SLURM_STEP_ID, which only srun sets: a plain `python train.py` in an sbatch script sees
# the allocation's SLURM_NTASKS but must still run as one process.
LAUNCHERS = (
    Launcher("torchrun", "RANK", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"),
    Launcher("slurm", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", None),
    Launcher(
        "openmpi",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    ),
    Launcher("mpich", "PMI_RANK", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"),
)
_NO_LAUNCHER = "none"
_SINGLE_PROCESS = Env(rank=0, local_rank=0, world_size=1, local_world_size=1)


def _parse_int(raw: str, name: str, problems: list[str]) -> Optional[int]:
    """Parse one value as an int, collecting a description instead of raising so the final
    error can name every bad variable at once."""
    try:
        return int(raw.strip())
    except ValueError:
        problems.append(f"{name}={raw!r} is not an integer")
        return None


def _is_present(environ: Mapping[str, str], launcher: Launcher) -> bool:
    """torchrun counts as present when any of its required variables is (a partial torchrun
    environment must be reported, not ignored); the others are keyed on their marker."""
    if launcher.name == "torchrun":
        return any(name in environ for name in (launcher.rank, launcher.local_rank, launcher.world))
    return launcher.marker in environ


def _slurm_local_world(environ: Mapping[str, str], problems: list[str]) -> Optional[int]:
    """Tasks on this node: SLURM_NTASKS_PER_NODE when the job fixed it, else this node's entry
    of SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE, whose compressed form ``2(x3),1``
    means three nodes with two tasks and one with one."""
    if "SLURM_NTASKS_PER_NODE" in environ:
        return _parse_int(environ["SLURM_NTASKS_PER_NODE"], "SLURM_NTASKS_PER_NODE", problems)
    for name in ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"):
        if name in environ:
            counts = _expand_tasks_per_node(environ[name], name, problems)
            node = _parse_int(environ.get("SLURM_NODEID", "0"), "SLURM_NODEID", problems)
            if counts is None or node is None:
                return None
            if not 0 <= node < len(counts):
                problems.append(f"SLURM_NODEID={node} has no entry in {name}={environ[name]!r}")
                return None
            return counts[node]
    return None


def _expand_tasks_per_node(raw: str, name: str, problems: list[str]) -> Optional[list[int]]:
    """``2(x3),1`` -> [2, 2, 2, 1]."""
    counts: list[int] = []
    for part in raw.split(","):
        count, _, repeat = part.partition("(x")
        if repeat and not repeat.endswith(")"):
            problems.append(f"{name}={raw!r} is not a SLURM task count list")
            return None
        value = _parse_int(count, name, problems)
        times = _parse_int(repeat[:-1], name, problems) if repeat else 1
        if value is None or times is None:
            return None
        counts.extend([value] * times)
    return counts


def _read(environ: Mapping[str, str], launcher: Launcher) -> Env:
    """Env from one launcher's variables; RuntimeError naming every missing or bad one."""
    required = [launcher.rank, launcher.local_rank, launcher.world]
    missing = [name for name in required if name not in environ]
    local_world_missing = launcher.local_world is not None and launcher.local_world not in environ
    if launcher.name == "slurm" and not any(
        name in environ for name in ("SLURM_NTASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
    ):
        missing.append("SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE")
    elif launcher.name in ("openmpi", "mpich") and local_world_missing:
        missing.append(str(launcher.local_world))
    if missing:
        present = [name for name in (launcher.marker, *required) if name in environ]
        present = list(dict.fromkeys(present))
        hint = (
            f"launch with torchrun or unset {', '.join(present)} to run as a single process"
            if launcher.name == "torchrun"
            else f"the {launcher.name} launcher environment looks damaged, set them or unset "
            f"{', '.join(present)} to run as a single process"
        )
        raise RuntimeError(
            f"ddpify: incomplete launcher environment: {', '.join(present)} "
            f"{'is' if len(present) == 1 else 'are'} set but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; {hint}."
        )

    problems: list[str] = []
    rank = _parse_int(environ[launcher.rank], launcher.rank, problems)
    local_rank = _parse_int(environ[launcher.local_rank], launcher.local_rank, problems)
    world_size = _parse_int(environ[launcher.world], launcher.world, problems)
    local_world_size: Optional[int]
    if launcher.local_world is None:
        local_world_size = _slurm_local_world(environ, problems)
    elif launcher.local_world in environ:
        local_world_size = _parse_int(environ[launcher.local_world], launcher.local_world, problems)
    else:
        # Older torchrun-style launchers do not export it; assume one node, which they ran.
        local_world_size = world_size
    local_world_name = launcher.local_world or "the tasks on this node"

    if not problems:
        assert rank is not None and local_rank is not None
        assert world_size is not None and local_world_size is not None
        if world_size < 1:
            problems.append(f"{launcher.world}={world_size} must be at least 1")
        elif not 0 <= rank < world_size:
            problems.append(f"{launcher.rank}={rank} must satisfy 0 <= {launcher.rank} < {launcher.world}={world_size}")
        if not 1 <= local_world_size <= max(world_size, 1):
            problems.append(f"{local_world_name}={local_world_size} must satisfy 1 <= {local_world_name} <= {launcher.world}={world_size}")
        elif not 0 <= local_rank < local_world_size:
            problems.append(
                f"{launcher.local_rank}={local_rank} must satisfy 0 <= {launcher.local_rank} < {local_world_name}={local_world_size}"
            )
    if problems:
        raise RuntimeError(f"ddpify: invalid launcher environment: {'; '.join(problems)}.")

    assert rank is not None and local_rank is not None
    assert world_size is not None and local_world_size is not None
    return Env(rank, local_rank, world_size, local_world_size)


def detect_launcher(environ: Optional[Mapping[str, str]] = None) -> tuple[str, Env]:
    """The launcher's name ("torchrun", "slurm", "openmpi", "mpich" or "none") and the Env it
    describes; the name tells ``setup()`` how to find the rendezvous address."""
    env = os.environ if environ is None else environ
    for launcher in LAUNCHERS:
        if _is_present(env, launcher):
            return launcher.name, _read(env, launcher)
    return _NO_LAUNCHER, _SINGLE_PROCESS


def detect_env(environ: Optional[Mapping[str, str]] = None) -> Env:
    """Describe this process from the launcher's environment variables.

    Launchers are tried in a fixed, documented order and the first one whose variables are
    present wins:

    1. torchrun / ``torch.distributed.run`` (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE).
    2. SLURM under ``srun`` (SLURM_STEP_ID present; SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS,
       SLURM_NTASKS_PER_NODE or SLURM_[STEP_]TASKS_PER_NODE with SLURM_NODEID).
    3. Open MPI (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE, _LOCAL_SIZE).
    4. MPICH / Intel MPI (PMI_RANK, MPI_LOCALRANKID, PMI_SIZE, MPI_LOCALNRANKS).
    5. Nothing found: a single process, ``Env(0, 0, 1, 1)``.

    Raises RuntimeError when a launcher's variables are incomplete or inconsistent, because
    guessing would silently train on the wrong shard or hang in the rendezvous.
    """
    return detect_launcher(environ)[1]
