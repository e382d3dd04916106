"""The order a set gives: ``list(set(words))`` numbers a vocabulary in the order of the
process's string hashes, which Python seeds anew in every process (``PYTHONHASHSEED``). Under
torchrun each rank then numbers the words differently: one row of an embedding stands for
another word on each rank, and DDP averages the gradients of different words (a Word2Vec
tutorial trains a wrong embedding with equal parameters on every rank).

Where a set is turned into an order -- ``list(set(x))`` / ``tuple(...)``, ``enumerate(set(x))``,
``for w in set(x)``, a comprehension over one -- on every rank alike (no per-rank decision on
the way, outside a loop of its own function), the order becomes rank 0's:
``ddpify.agreed(list(set(x)))`` (the value itself with one process, so a plain run is the
original). Only in scripts whose models the conversion wraps; ``sorted(set(x))`` is an order
already; a set only tested for membership has none.
"""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.set_orders import SET, ordered_set
from ddpify.convert import names, rewrites
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners import bootstrap
from ddpify.convert.record import Recording
from ddpify.findings import Change
from ddpify.tree.cstutil import code


def plan(recording: Recording, facts: Facts) -> None:
    """``ddpify.agreed(...)`` around each set made into an order at set-up."""
    if not facts.wraps_models():
        return
    source = recording.analysis.source
    for call in source.calls_by_callee.get("set", []):
        if SET not in recording.qualified(call.func) or not once_on_every_rank(recording, call):
            continue
        target = ordered_set(recording.analysis.source, call)
        if target is None or target in facts.node_rewrites or _agreed_already(recording, target):
            continue
        if not _group_up(recording, facts, call):
            continue  # no import prologue to set the group up after: set_up_after_imports reported it
        whole = target is not call  # list(set(x)): the list itself is agreed
        what = (
            f"{code(target)[:60]} is ordered by this process's string hashes, seeded apart on every rank: ddpify.agreed(...) gives "
            "every rank rank 0's order (a vocabulary numbered alike, so each embedding row is one word everywhere)"
        )
        facts.node_rewrites[target] = NodeRewrite(rewrites.agreed if whole else _agreed_list, what)


def _group_up(recording: Recording, facts: Facts, node: cst.CSTNode) -> bool:
    """The process group is up where ``node`` runs: ``ddpify.agreed`` asks rank 0 only in a joined
    group. Module-level code outside the ``__main__`` block that ``ddpify.distributed()`` wraps
    runs at import, before it: the group is then also set up right after the imports."""
    statement = next((a for a in recording.ancestors(node) if isinstance(recording.parent(a), cst.Module)), None)
    if facts.main_guard is None or statement is None or statement is facts.main_guard or facts.setup_after is not None:
        return True
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return True  # runs when called: from the __main__ block, once the group is up
    bootstrap.set_up_after_imports(
        recording,
        facts,
        statement,
        f"a set is ordered at import time (line {recording.line(statement)}), before the __main__ block runs",
        f"a set is ordered at line {recording.line(statement)}, when the module is imported, before the __main__ block sets the "
        "process group up: ddpify.agreed(...) cannot ask rank 0 there, so every rank keeps its own order",
    )
    return facts.setup_after is not None


def _agreed_list(node: cst.CSTNode) -> cst.CSTNode:
    """``set(x)`` iterated → ``ddpify.agreed(list(set(x)))``."""
    assert isinstance(node, cst.BaseExpression)
    return rewrites.agreed(cst.parse_expression(f"list({code(node)})"))


def _agreed_already(recording: Recording, node: cst.CSTNode) -> bool:
    arg = recording.parent(node)
    holder = recording.parent(arg) if isinstance(arg, cst.Arg) else None
    if isinstance(holder, cst.Call) and f"{names.RUNTIME_MODULE}.agreed" in recording.qualified(holder.func):
        return True
    inner = recording.parent(holder) if isinstance(holder, cst.Call) else None  # agreed(list(set(x)))
    outer = recording.parent(inner) if isinstance(inner, cst.Arg) else None
    return isinstance(outer, cst.Call) and f"{names.RUNTIME_MODULE}.agreed" in recording.qualified(outer.func)


def once_on_every_rank(recording: Recording, node: cst.CSTNode) -> bool:
    """Every rank runs ``node`` alike, and not in a loop of its own function (``agreed`` is a
    collective every rank must reach the same number of times; a loop would pay one per pass)."""
    child = node
    for ancestor in recording.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, (cst.For, cst.While)) and not (isinstance(ancestor, cst.For) and child is ancestor.iter):
            return False
        child = ancestor
    context = recording.analysis.context
    return context.every_rank(node) and context.divergence.decision(node) is None


def plan_elsewhere(recording: Recording, facts: Facts) -> None:
    """A function or class of the project's modules that turns a set into an order
    (``Helper.orders_sets``: pygcn's ``load_data()`` numbering the classes of ``set(labels)``):
    that code is not rewritten here, so every rank restarts once with one string-hash seed,
    ``ddpify.setup(same_string_hashes=True)``, and orders the set alike."""
    if not facts.wraps_models() or facts.same_string_hashes:
        return
    source = recording.analysis.source
    for call in source.of_types(cst.Call):
        helper = source.project.helper(call)
        if helper is None and isinstance(call.func, cst.Name):
            helper = source.project.named(f"{call.func.value}.__init__")
        if helper is None or not helper.orders_sets:
            continue
        facts.same_string_hashes = True
        facts.changes.append(
            Change(
                recording.line(call),
                f"{code(call.func)}() (another file) turns a set into an order, which each process's string hashes decide: "
                "every rank restarts once with PYTHONHASHSEED=0 (ddpify.setup(same_string_hashes=True)), so all order it alike",
            )
        )
        return
