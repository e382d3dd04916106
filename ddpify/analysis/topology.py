"""Whether a script can only ever run on one node, where the local rank is the global rank.

A run whose rendezvous is pinned to this machine (``init_method="tcp://127.0.0.1:23456"``,
``os.environ["MASTER_ADDR"] = "localhost"``, ``args.dist_url = "tcp://127.0.0.1:..."``) or
whose world is sized by this machine's GPUs (``world_size=torch.cuda.device_count()``) has no
second node: a guard on the local rank is a guard on rank 0 there. So has a script that takes no
node rank (no ``--node_rank`` / ``NODE_RANK`` / ``--nnodes``) and treats this machine's GPU count
as the world: ``nprocs = torch.cuda.device_count()`` handed to a helper of the file that divides
an ``all_reduce``d sum by it (``reduce_mean(loss, nprocs)``). A loopback address that is
only a default (``add_argument(..., default=...)``, ``os.environ.get("MASTER_ADDR",
"localhost")``) can be overridden for a multi-node run and does not count.
"""

from __future__ import annotations

import re
from typing import cast

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code

_LOOPBACK = ("127.0.0.1", "localhost")
_DEFAULTS = frozenset({"add_argument", "get", "getenv", "setdefault", "pop"})
_DEVICE_COUNT = "torch.cuda.device_count"
# Inputs that place a process on one of several nodes.
_NODE_INPUT = re.compile(r"node_?rank|nnodes|num_?nodes|n_?nodes|NODE_RANK|SLURM_NODEID|GROUP_RANK", re.I)
_REDUCE = frozenset({"torch.distributed.all_reduce", "torch.distributed.reduce"})


def single_node(source: Source) -> bool:
    """The script pins its rendezvous to this machine or sizes its world by the local GPUs."""
    strings = cast(list[cst.BaseString], source.of_types(cst.SimpleString, cst.FormattedString))
    return (
        any(_forced_loopback(source, s) for s in strings)
        or any(_local_world(source, call) for call in source.calls_by_callee.get("init_process_group", []))
        or _averaged_over_local_gpus(source, strings)
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


def _device_counts(source: Source) -> set[str]:
    """Names and attributes every assignment of which is ``torch.cuda.device_count()``."""
    return {
        target
        for target, bindings in source.assignments.items()
        if bindings and all(isinstance(v, cst.Call) and _DEVICE_COUNT in source.qualified(v) for _, v in bindings)
    }


def _averaged_over_local_gpus(source: Source, strings: list[cst.BaseString]) -> bool:
    """No node input, and a helper that averages an ``all_reduce`` over its parameter is called
    with the local GPU count: the script's world is this machine."""
    if any(_NODE_INPUT.search(code(s)) for s in strings) or any(_NODE_INPUT.search(n) for n in source.names_by_value):
        return False
    counts = _device_counts(source)
    if not counts:
        return False
    for function in _averaging_helpers(source):
        names = [p.name.value for p in function.params.params]
        for call in source.call_sites(function):
            for position, arg in enumerate(call.args):
                index = names.index(arg.keyword.value) if arg.keyword is not None and arg.keyword.value in names else position
                if code(arg.value) in counts and index < len(names) and _divides_by(source, function, names[index]):
                    return True
    return False


def _averaging_helpers(source: Source) -> list[cst.FunctionDef]:
    found = []
    for function in (f for functions in source.functions.values() for f in functions):
        calls = source.of_types_in(function, cst.Call)
        if any(source.qualified(c) & _REDUCE for c in calls):
            found.append(function)
    return found


def _divides_by(source: Source, function: cst.FunctionDef, parameter: str) -> bool:
    """``x /= parameter`` or ``x / parameter`` in ``function``."""
    for node in source.of_types_in(function, cst.AugAssign, cst.BinaryOperation):
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.DivideAssign):
            divisor = node.value
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            divisor = node.right
        else:
            continue
        if isinstance(divisor, cst.Name) and divisor.value == parameter:
            return True
    return False
