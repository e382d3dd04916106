"""Small questions many rules ask about a node: is it behind a rank guard, which names hold a
DDP-wrapped model, does a test look at the global or the local rank."""

from __future__ import annotations

import re

import libcst as cst

from ddpify.check.rule import Rule
from ddpify.convert import names
from ddpify.tree.cstutil import code, of_types

RANK_TEST = names.RANK_TEST
DDP_WRAPPERS = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "ddpify.runtime.prepare_model",
    }
)
EPOCH_VARIABLE = re.compile(r"epoch|^ep$|^e$", re.I)


def rank_guard(rule: Rule, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The test of the innermost enclosing ``if`` that selects a rank, or None."""
    child = node
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, cst.If) and child is not ancestor.test and RANK_TEST.search(code(ancestor.test)):
            return ancestor.test
        if isinstance(ancestor, cst.IfExp) and child is not ancestor.test and RANK_TEST.search(code(ancestor.test)):
            return ancestor.test
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            if RANK_TEST.search(ancestor.name.value):
                return ancestor.name
            break
        child = ancestor
    return None


def is_ddp_wrap(rule: Rule, call: cst.Call) -> bool:
    return bool(rule.qualified(call) & DDP_WRAPPERS)


def call_assignments(module: cst.Module) -> list[cst.Assign]:
    """Assignments of a call's result (``x = f(...)``): where a wrap or a loader is made."""
    return [a for a in of_types(module, cst.Assign) if isinstance(a, cst.Assign) and isinstance(a.value, cst.Call)]


def is_epoch_loop(node: cst.For) -> bool:
    return isinstance(node.target, cst.Name) and bool(EPOCH_VARIABLE.search(node.target.value))
