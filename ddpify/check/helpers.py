"""Small questions many rules ask about a node: which calls wrap a model in DDP."""

from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Rule
from ddpify.tree.cstutil import of_types

DDP_WRAPPERS = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "ddpify.runtime.prepare_model",
    }
)


def is_ddp_wrap(rule: Rule, call: cst.Call) -> bool:
    return bool(rule.qualified(call) & DDP_WRAPPERS)


def call_assignments(module: cst.Module) -> list[cst.Assign]:
    """Assignments of a call's result (``x = f(...)``): where a wrap or a loader is made."""
    return [a for a in of_types(module, cst.Assign) if isinstance(a, cst.Assign) and isinstance(a.value, cst.Call)]
