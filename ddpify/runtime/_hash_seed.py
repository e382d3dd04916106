"""One string-hash seed on every rank. Python seeds its string hashes anew in every process
unless ``PYTHONHASHSEED`` is set, so a set of strings iterates in another order on each rank:
a vocabulary or the classes of a dataset numbered from ``set(labels)`` differ per rank, and DDP
averages the gradients of different words or classes. Where that ordering is in code the
converter does not rewrite (a module of the project: pygcn's ``encode_onehot``), the only cure
is the seed itself, which the interpreter reads when it starts: the rank starts again, once,
with ``PYTHONHASHSEED=0`` (the same process id, so the launcher still watches it)."""

from __future__ import annotations

import os
import sys

from ._guard import note

HASH_SEED_ENV_VAR = "PYTHONHASHSEED"


def restart_with_shared_hash_seed() -> None:
    """Restart this process with ``PYTHONHASHSEED=0`` unless a seed is set already (by the user's
    launch command, or by this restart). Call it before joining the process group."""
    if os.environ.get(HASH_SEED_ENV_VAR, "") not in ("", "random"):  # Python reads these as "not set"
        return
    os.environ[HASH_SEED_ENV_VAR] = "0"
    note("restart", reason=f"{HASH_SEED_ENV_VAR}=0: the same string hashes, so sets order alike on every rank")
    sys.stdout.flush()
    sys.stderr.flush()
    argv = list(getattr(sys, "orig_argv", [])) or [sys.executable, *sys.argv]
    os.execv(sys.executable, argv)
