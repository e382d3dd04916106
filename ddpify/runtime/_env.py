"""Launcher detection: which process am I, and how many are there?

Everything here reads environment variables only and never touches ``torch.distributed``, so
``rank()`` and friends answer correctly before ``setup()`` has run (for example while a script
parses its arguments) and in a plain ``python train.py`` run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

__all__ = ["Env", "detect_env"]

# The variables torchrun (torch.distributed.run) exports to every worker. MASTER_ADDR and
# MASTER_PORT are consumed by init_process_group's env:// rendezvous, not by us.
_TORCHRUN_REQUIRED = ("RANK", "LOCAL_RANK", "WORLD_SIZE")
_TORCHRUN_OPTIONAL = "LOCAL_WORLD_SIZE"


@dataclass(frozen=True)
class Env:
    """Where this process sits in the job; frozen so callers can share and cache it safely."""

    rank: int
    local_rank: int
    world_size: int
    local_world_size: int


_SINGLE_PROCESS = Env(rank=0, local_rank=0, world_size=1, local_world_size=1)


def _parse_int(environ: Mapping[str, str], name: str, problems: list[str]) -> Optional[int]:
    """Parse one variable as an int, collecting a description instead of raising so the final
    error can name every bad variable at once."""
    raw = environ[name]
    try:
        return int(raw.strip())
    except ValueError:
        problems.append(f"{name}={raw!r} is not an integer")
        return None


def _from_torchrun(environ: Mapping[str, str]) -> Optional[Env]:
    """Env from torchrun's variables, None when no torchrun variable is present at all."""
    present = [name for name in _TORCHRUN_REQUIRED if name in environ]
    if not present:
        return None
    missing = [name for name in _TORCHRUN_REQUIRED if name not in environ]
    if missing:
        raise RuntimeError(
            f"ddpify: incomplete launcher environment: {', '.join(present)} "
            f"{'is' if len(present) == 1 else 'are'} set but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; launch with torchrun or unset "
            f"{', '.join(present)} to run as a single process."
        )

    problems: list[str] = []
    rank = _parse_int(environ, "RANK", problems)
    local_rank = _parse_int(environ, "LOCAL_RANK", problems)
    world_size = _parse_int(environ, "WORLD_SIZE", problems)
    local_world_size: Optional[int]
    if _TORCHRUN_OPTIONAL in environ:
        local_world_size = _parse_int(environ, _TORCHRUN_OPTIONAL, problems)
    else:
        # Older launchers do not export it; assume a single node, which is what they ran.
        local_world_size = world_size

    if not problems:
        assert rank is not None and local_rank is not None
        assert world_size is not None and local_world_size is not None
        if world_size < 1:
            problems.append(f"WORLD_SIZE={world_size} must be at least 1")
        elif not 0 <= rank < world_size:
            problems.append(f"RANK={rank} must satisfy 0 <= RANK < WORLD_SIZE={world_size}")
        if not 1 <= local_world_size <= max(world_size, 1):
            problems.append(
                f"LOCAL_WORLD_SIZE={local_world_size} must satisfy "
                f"1 <= LOCAL_WORLD_SIZE <= WORLD_SIZE={world_size}"
            )
        elif not 0 <= local_rank < local_world_size:
            problems.append(
                f"LOCAL_RANK={local_rank} must satisfy "
                f"0 <= LOCAL_RANK < LOCAL_WORLD_SIZE={local_world_size}"
            )
    if problems:
        raise RuntimeError(f"ddpify: invalid launcher environment: {'; '.join(problems)}.")

    assert rank is not None and local_rank is not None
    assert world_size is not None and local_world_size is not None
    return Env(rank, local_rank, world_size, local_world_size)


def detect_env(environ: Optional[Mapping[str, str]] = None) -> Env:
    """Describe this process from the launcher's environment variables.

    Launchers are tried in a fixed, documented order and the first one whose variables are
    present wins:

    1. torchrun / ``torch.distributed.run`` (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE).
    2. (future) SLURM (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS) -- must come after torchrun
       because torchrun jobs started inside an allocation also see SLURM variables.
    3. (future) Open MPI / MPICH (OMPI_COMM_WORLD_*, PMI_*).
    4. Nothing found: a single process, ``Env(0, 0, 1, 1)``.

    Raises RuntimeError when a launcher's variables are incomplete or inconsistent, because
    guessing would silently train on the wrong shard or hang in the rendezvous.
    """
    env = os.environ if environ is None else environ
    found = _from_torchrun(env)
    if found is not None:
        return found
    return _SINGLE_PROCESS
