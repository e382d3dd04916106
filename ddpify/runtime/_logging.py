"""The ``logging`` module under DDP: one process writes the log the script configures.

Every rank runs ``logging.basicConfig(filename="train.log")`` and builds every ``FileHandler``:
N processes truncate and append to one file, and every INFO line shows N times. Through
``rank_zero_logging`` rank 0 configures logging exactly as written; the others never open the
file, and show their WARNING and above on stderr, marked with their rank (the replica policy of
Hugging Face's Trainer), so a problem on one rank is still seen.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from ._process_group import is_main_process, rank

__all__ = ["rank_zero_logging"]

_REPLICA_MARK = "_ddpify_replica"


def rank_zero_logging(factory: Callable[..., Any]) -> Callable[..., Any]:
    """``ddpify.rank_zero_logging(logging.basicConfig)(...)``, ``(logging.FileHandler)(path)``:
    the callable itself on rank 0 (and with one process); elsewhere a stand-in that sets up
    this rank's warnings-only console once and returns a ``logging.NullHandler`` (a real
    handler, so ``setFormatter``/``setLevel``/``addHandler`` on it still work)."""
    if is_main_process():
        return factory
    return _replica_logging


def _replica_logging(*args: Any, **kwargs: Any) -> logging.Handler:
    root = logging.getLogger()
    if not any(getattr(h, _REPLICA_MARK, False) for h in root.handlers):
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(logging.WARNING)
        console.setFormatter(logging.Formatter(f"[rank {rank()}] %(levelname)s:%(name)s:%(message)s"))
        setattr(console, _REPLICA_MARK, True)
        root.addHandler(console)  # also keeps logging.info() from calling basicConfig() itself
    return logging.NullHandler()
