"""Names computed from a folder's contents at set-up: ``run_dir = f"exp{len(os.listdir(root)) + 1}"``,
the next free run folder. Each rank lists the folder at its own moment; once rank 0 has created
``exp1`` (under ``main_process_first``, or simply first), a rank that lists after it names
``exp2``, a folder no rank writes, and reads its checkpoints back from there (unseen20m's
kdstudy_distill crashed so). The value becomes ``ddpify.agreed(...)``: rank 0's name on every
rank, asked before any rank creates it (every rank reaches the call); one process keeps its own.

Only a listing reduced to one value counts (``len``, ``max``, ``min``, ``sorted(...)[-1]``), there
or through the name it is kept in (``versions = glob.glob("runs/version_*")`` then
``f"version_{len(versions)}"``; ``ids = [int(p[8:]) for p in os.listdir(root)]`` then
``max(ids) + 1``): the listing itself is then rank 0's. A list of data files (``files =
sorted(glob.glob("data/*.png"))``) only iterated is the same on every rank.

The same name found by probing (``while os.path.exists(d): run += 1; d = f"out/{title}-{run}"``,
unseen20p's RelativisticGAN; ``for i in count(): if not os.path.isdir(d): break``): a rank that
probes after another created its folder takes the next one (two run folders, rank 1's empty).
The test becomes ``ddpify.agreed(...)``: rank 0 probes and every rank loops on its answers."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import rewrites
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.directories import asks_rank_zero, tests_existence
from ddpify.convert.planners.rank_zero import on_rank_zero_only
from ddpify.convert.planners.set_orders import once_on_every_rank
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, of_types

_LISTINGS = frozenset({"os.listdir", "os.scandir", "glob.glob", "glob.iglob"})
_REDUCERS = frozenset({"builtins.len", "builtins.max", "builtins.min"})


def plan(recording: Recording, facts: Facts) -> None:
    """``ddpify.agreed(...)`` around each set-up assignment whose value counts a folder's entries."""
    if not facts.wraps_models():
        return
    for call in recording.analysis.source.of_types(cst.Call):
        if not recording.qualified(call.func) & _LISTINGS or not (_reduced(recording, call) or _kept_then_reduced(recording, call)):
            continue
        assign = next((a for a in recording.ancestors(call) if isinstance(a, cst.Assign)), None)
        if assign is None or assign.value in facts.node_rewrites or asks_rank_zero(recording, assign.value):
            continue
        if not once_on_every_rank(recording, assign):
            continue
        target = code(assign.targets[0].target)
        reduced = _reduced(recording, call)
        what = "is named from what the folder holds" if reduced else "lists the folder a name is counted from"
        facts.node_rewrites[assign.value] = NodeRewrite(
            rewrites.agreed,
            f"{target} {what} ({code(call)[:50]}): ddpify.agreed(...) gives every rank rank 0's {'name' if reduced else 'listing'}, "
            "asked before any rank creates it (a rank that lists the folder after rank 0 made its run folder would name another)",
        )


def plan_probes(recording: Recording, facts: Facts) -> None:
    """``ddpify.agreed(...)`` around the existence test of each probe loop every rank runs alike."""
    context = recording.analysis.context
    for probe in recording.analysis.source.of_types(cst.While, cst.If):
        assert isinstance(probe, (cst.While, cst.If))
        if isinstance(probe, cst.If) and not _breaks_a_loop(recording, probe):
            continue
        if not tests_existence(recording, probe.test) or asks_rank_zero(recording, probe.test) or probe.test in facts.node_rewrites:
            continue
        if on_rank_zero_only(recording, facts, probe) or not context.every_rank(probe):
            continue
        what = f"`{code(probe.test)}` probes for a free name: ddpify.agreed(...) gives every rank rank 0's answers, so all take one name"
        facts.node_rewrites[probe.test] = NodeRewrite(rewrites.agreed, what)


def _breaks_a_loop(recording: Recording, test: cst.If) -> bool:
    """``if not os.path.isdir(d): break`` directly in a loop's body, with no ``else``."""
    body = test.body.body if isinstance(test.body, cst.IndentedBlock) else []
    block = recording.parent(test)
    return (
        test.orelse is None
        and len(body) == 1
        and isinstance(body[0], cst.SimpleStatementLine)
        and isinstance(body[0].body[0], cst.Break)
        and block is not None
        and isinstance(recording.parent(block), (cst.For, cst.While))
    )


def _kept_then_reduced(recording: Recording, listing: cst.Call) -> bool:
    """``versions = glob.glob(p)`` / ``sorted(...)`` / a comprehension over the listing, kept in
    a name that a later assignment of the same scope reduces to one value (``len(versions)``,
    ``max(ids)``, ``max(int(v[8:]) for v in versions)``, ``sorted(ids)[-1]``)."""
    node: cst.CSTNode = listing
    while isinstance(parent := recording.parent(node), (cst.Arg, cst.Call, cst.CompFor, cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        if isinstance(parent, cst.Call) and not recording.qualified(parent.func) & _KEEPERS:
            return False
        node = parent
    if not isinstance(parent, cst.Assign) or parent.value is not node or not isinstance(parent.targets[0].target, cst.Name):
        return False
    name = parent.targets[0].target.value
    scope = recording.function_of(parent) or recording.module
    for call in recording.analysis.source.of_types_in(scope, cst.Call):
        if call.args and recording.qualified(call.func) & (_REDUCERS | {"builtins.sorted"}) and _reads(call.args[0].value, name):
            if recording.qualified(call.func) & _REDUCERS or isinstance(recording.parent(call), cst.Subscript):
                return any(isinstance(a, cst.Assign) for a in recording.ancestors(call))
    return False


def _reads(expression: cst.BaseExpression, name: str) -> bool:
    """``versions``, or a comprehension over it."""
    if isinstance(expression, cst.Name):
        return expression.value == name
    comps = [c for c in of_types(expression, cst.CompFor) if isinstance(c.iter, cst.Name) and c.iter.value == name]
    return isinstance(expression, (cst.GeneratorExp, cst.ListComp)) and bool(comps)


_KEEPERS = frozenset({"builtins.sorted", "builtins.list", "builtins.tuple"})


def _reduced(recording: Recording, listing: cst.Call) -> bool:
    """The listing is reduced to one value: ``len(os.listdir(d))``, ``max(glob.glob(p))``,
    ``sorted(os.listdir(d))[-1]``."""
    argument = recording.parent(listing)
    holder = recording.parent(argument) if isinstance(argument, cst.Arg) else None
    if not isinstance(holder, cst.Call):
        return False
    if recording.qualified(holder.func) & _REDUCERS:
        return True
    indexed = recording.parent(holder)
    return "builtins.sorted" in recording.qualified(holder.func) and isinstance(indexed, cst.Subscript)
