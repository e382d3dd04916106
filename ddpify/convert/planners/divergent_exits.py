"""Training loops the ranks may leave, or run, a different number of times. Once the model is
wrapped, every backward all-reduces gradients with all ranks: a rank that breaks out of the
loop, returns, or skips a step's backward while the others go on leaves them waiting in the
all-reduce. Where the decision reads values the ranks may see differently
(``ddpify.analysis.divergence``): cleanRL's ``if approx_kl > args.target_kl: break`` over each
rank's own minibatches, a ``while time.time() - start < budget:`` loop, GAN_stability's ``if
time.time() - t0 > restart: exit(3)``, every rank leaves once one would (``ddpify.any_rank``,
``ddpify.all_ranks``); ``if loss.isnan(): continue`` before the backward, and a decision the
ranks do not all reach, are reported."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ddpify.analysis import Analysis
from ddpify.convert import collectives, rewrites
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.file_writes import recording_statement
from ddpify.convert.record import Recording

_KINDS = {cst.Break: "break", cst.Continue: "continue", cst.Return: "return"}
# calls that end the process: a rank that takes them leaves the others in the next all-reduce
_EXITS = frozenset({"builtins.exit", "builtins.quit", "sys.exit", "os._exit"})


def report(recording: Recording, facts: Facts) -> None:
    """Also where the only DDP models are the ones the report tells the user to wrap (held
    models): the hang comes with following that advice, so it is said now, not after it."""
    held = not facts.wraps_models() and not recording.existing_wraps
    if held and not facts.held_models:
        return  # no DDP model, now or advised: no all-reduce to wait in
    before = len(facts.manual)
    shared = recording.analysis
    divergence = shared.context.divergence
    reported: set[int] = set()
    for loop in shared.source.of_types(cst.For, cst.While):
        if not isinstance(loop, (cst.For, cst.While)) or not divergence.trains(loop):
            continue
        test = loop.test if isinstance(loop, cst.While) else loop.iter
        why = divergence.count_why(loop)
        if why is not None and why.kind != "rank":
            found = collectives.Divergent(test, why.kind, why.reason, recording.line(test))
            if held or not (isinstance(loop, cst.While) and _taken_together(recording, facts, loop, found, "loop")):
                _add(recording, facts, reported, loop, found, "loop")
    exits = [c for c in shared.source.of_types(cst.Call) if shared.source.qualified(c.func) & _EXITS]
    for node in [*shared.source.of_types(cst.Break, cst.Continue, cst.Return), *exits]:
        inner = _training_loop(recording, shared, node)
        if inner is None or (isinstance(node, cst.Continue) and not _backward_after(recording, shared, inner, node)):
            continue
        statement = recording_statement(recording, node)
        divergent = shared.context.divergent_condition(statement)
        if divergent is None or divergent.kind == "rank" or not _inside(recording, divergent.node, inner):
            continue
        kind = _KINDS.get(type(node), "exit")
        decided = recording_statement(recording, divergent.node)
        if held or kind == "continue" or not _taken_together(recording, facts, decided, divergent, kind):
            _add(recording, facts, reported, decided, divergent, kind)
    if held:
        wrap = ", ".join(f"{h.key} (line {h.items[0].line})" if h.items else h.key for h in facts.held_models)
        for index in range(before, len(facts.manual)):
            item = facts.manual[index]
            facts.manual[index] = replace(item, why=f"once you wrap {wrap} as advised, " + item.why[0].lower() + item.why[1:])


def _add(recording: Recording, facts: Facts, reported: set[int], where: cst.CSTNode, found: collectives.Divergent, kind: str) -> None:
    line = recording.line(where)
    if line not in reported:
        reported.add(line)
        facts.manual.append(collectives.exit_item(line, found, kind))


def _taken_together(recording: Recording, facts: Facts, decided: cst.CSTNode, divergent: collectives.Divergent, kind: str) -> bool:
    """``if ddpify.any_rank(bad >= patience): break``, ``while ddpify.all_ranks(time.time() - t0 <
    budget):``: every rank leaves the loop as soon as one rank would (a NaN loss, a spent
    budget, a shard's early stop), so all leave together whichever way each decides. Written
    where every rank reaches the ``if`` / ``while`` alike (each then asks once) and its test is
    the decision. Not for a ``continue`` (the others would go on into a backward that rank skips)
    nor an ``except`` handler: those are reported."""
    test = getattr(decided, "test", None)
    if divergent.kind not in ("data", "clock", "random") or test is not divergent.node or not isinstance(decided, (cst.If, cst.While)):
        return False
    if recording.analysis.context.divergent_condition(decided) is not None or test in facts.node_rewrites:
        return False
    stays = kind == "loop"  # the loop runs while the test holds: on while it holds on every rank
    helper = "all_ranks" if stays else "any_rank"
    verb = (
        "runs while it holds on every rank"
        if stays
        else f"{_VERBS.get(kind, 'ends the process')} on all ranks as soon as one rank's test says so"
    )
    reduce = (
        "; to decide on every rank's data together, reduce the value first (torch.distributed.all_reduce)"
        if divergent.kind == "data"
        else ""
    )
    facts.node_rewrites[test] = NodeRewrite(
        rewrites.all_ranks if stays else rewrites.any_rank,
        f"{collectives.decision(divergent)} → ddpify.{helper}(...): the training loop {verb} ({divergent.reason}; a rank that "
        f"left alone would leave the others waiting in the gradient all-reduce){reduce}",
    )
    return True


_VERBS = {"break": "stops", "return": "returns"}


def _training_loop(recording: Recording, shared: Analysis, node: cst.CSTNode) -> cst.CSTNode | None:
    """The innermost loop around ``node`` in its function, when that loop trains."""
    for ancestor in recording.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(ancestor, (cst.For, cst.While)):
            return ancestor if shared.context.divergence.trains(ancestor) else None
    return None


def _backward_after(recording: Recording, shared: Analysis, loop: cst.CSTNode, node: cst.CSTNode) -> bool:
    """A ``continue`` that skips a backward: one comes after it in the loop's body (itself, or
    in a function of this file it calls)."""
    line = recording.line(node)
    divergence = shared.context.divergence
    for call in shared.source.of_types_in(loop, cst.Call):
        if recording.line(call) <= line:
            continue
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
            return True
        if any(divergence.trains(f) for f in shared.source.functions_called(call)):
            return True
    return False


def _inside(recording: Recording, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    return any(a is loop for a in recording.ancestors(node))
