"""Whether a script can only ever run on one node, where the local rank is the global rank.

A run whose rendezvous is pinned to this machine (``init_method="tcp://127.0.0.1:23456"``,
``os.environ["MASTER_ADDR"] = "localhost"``, ``args.dist_url = "tcp://127.0.0.1:..."``) or
whose world is sized by this machine's GPUs (``world_size=torch.cuda.device_count()``) has no
second node: a guard on the local rank is a guard on rank 0 there. A loopback address that is
only a default (``add_argument(..., default=...)``, ``os.environ.get("MASTER_ADDR",
"localhost")``) can be overridden for a multi-node run and does not count.
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code

_LOOPBACK = ("127.0.0.1", "localhost")
_DEFAULTS = frozenset({"add_argument", "get", "getenv", "setdefault", "pop"})
_DEVICE_COUNT = "torch.cuda.device_count"


def single_node(source: Source) -> bool:
    """The script pins its rendezvous to this machine or sizes its world by the local GPUs."""
    strings = cast(list[cst.BaseString], source.of_types(cst.SimpleString, cst.FormattedString))
    return any(_forced_loopback(source, s) for s in strings) or any(
        _local_world(source, call) for call in source.calls_by_callee.get("init_process_group", [])
    )


def _forced_loopback(source: Source, string: cst.BaseString) -> bool:
    if not any(host in code(string) for host in _LOOPBACK):
        return False
    for ancestor in source.ancestors(string):
        if isinstance(ancestor, cst.Call):
            func = ancestor.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
            if name in _DEFAULTS:
                return False
            if name == "init_process_group":
                return True
        if isinstance(ancestor, (cst.Assign, cst.AnnAssign)):
            return True
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False


def _local_world(source: Source, call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "world_size":
            values = [arg.value]
            if isinstance(arg.value, cst.Name):
                values += [v for _, v in source.assignments.get(arg.value.value, []) if v is not None]
            return any(isinstance(v, cst.Call) and _DEVICE_COUNT in source.qualified(v) for v in values)
    return False
