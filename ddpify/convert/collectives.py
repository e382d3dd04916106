"""What the converter says about a collective it would insert under a decision the ranks may
take differently (``ddpify.analysis.divergence``): the ranks that skip the branch never reach
it, and the ones inside wait for them for ever. The rewrite avoids the wait (``ddpify.save(...,
wait=False)``, no ``main_process_first``); the report names the decision, why the ranks may
disagree, and what makes them agree."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis import Analysis
from ddpify.analysis.divergence import Divergent
from ddpify.findings import ManualItem

# What makes every rank take the same decision, by what makes them differ.
_AGREE = {
    "data": (
        "to keep one decision for all ranks, reduce the value across ranks before the test "
        "(t = torch.tensor(value, device=ddpify.device()); torch.distributed.all_reduce(t); value = t.item() / torch.distributed.get_world_size())"
    ),
    "clock": (
        "to keep one decision for all ranks, take it on rank 0 and share it "
        "(flag = [decision]; torch.distributed.broadcast_object_list(flag, src=0); decision = flag[0]), or count steps or epochs instead of time"
    ),
    "random": (
        "to keep one decision for all ranks, draw it on rank 0 and share it "
        "(torch.distributed.broadcast_object_list([value], src=0)), or draw it from a torch.Generator seeded alike on every rank"
    ),
    "rank": "to save from one rank, test ddpify.is_main_process() instead",
    "exception": "nothing to change if rank 0's own save is what you want; no other rank waits for it",
}


def unwaited_save(analysis: Analysis, save: cst.Call) -> Divergent | None:
    """The decision that makes the ``torch.save`` call ``save`` a ``ddpify.save(..., wait=False)``:
    it runs on every rank alike, into one shared file, under a test the ranks may take
    differently. None for a save that waits (or is left as it is)."""
    if not analysis.context.every_rank(save) or analysis.output.per_rank_file(save):
        return None
    return analysis.context.divergent_condition(save)


def decision(divergent: Divergent) -> str:
    """``if acc > best_acc`` (line 12), as a report names it."""
    text = " ".join(divergent.text.split())
    text = text if len(text) <= 70 else text[:67] + "..."
    return f"`{text}` (line {divergent.line})"


def save_item(line: int, divergent: Divergent) -> ManualItem:
    """A ``torch.save`` under a divergent decision: saved by rank 0 without the barrier."""
    return ManualItem(
        line,
        f"torch.save runs under {decision(divergent)}, which the ranks may decide differently: {divergent.reason}. "
        "A save that waited for every rank (a barrier) would hang the ranks that take the branch while the others go on",
        f"ddpify.save(..., wait=False) is written: rank 0 saves when it takes the branch and no rank waits; {_AGREE[divergent.kind]}",
    )


def save_change(divergent: Divergent) -> str:
    return f"torch.save → ddpify.save(..., wait=False): rank 0 writes, nobody waits (under {decision(divergent)}, ranks may disagree)"


def download_item(line: int, divergent: Divergent) -> ManualItem:
    """A download under a divergent decision: ``main_process_first`` (two barriers) is not added."""
    return ManualItem(
        line,
        f"this download runs under {decision(divergent)}, which the ranks may decide differently: {divergent.reason}. "
        "ddpify.main_process_first() (rank 0 first, the others wait) would hang the ranks that enter it, so every rank "
        "that gets here downloads at once",
        "download before the decision, on every rank, under `with ddpify.main_process_first():` (rank 0 fetches, the others then read its files)",
    )


_EXIT_VERBS = {
    "break": "stops early",
    "continue": "skips the rest of a step",
    "return": "returns early",
    "loop": "runs",
    "exit": "ends the process",
}


def exit_item(line: int, divergent: Divergent, exit_kind: str) -> ManualItem:
    """A training loop left, or run, a number of times the ranks may decide differently: DDP's
    gradient all-reduce in the next backward waits for ranks that are no longer there."""
    if exit_kind == "loop":
        what = f"the training loop runs as long as {decision(divergent)} says, which the ranks may decide differently"
    else:
        what = (
            f"the training loop {_EXIT_VERBS[exit_kind]} ({exit_kind}) under {decision(divergent)}, which the ranks may decide differently"
        )
    # a metric of random minibatches (cleanRL's approx_kl) is made alike like one of a shard
    kind = "data" if divergent.kind == "random" else divergent.kind
    agree = _AGREE[kind] if kind != "exception" else "handle the error alike on every rank (or let it stop the job)"
    return ManualItem(
        line,
        f"{what}: {divergent.reason}. Every backward through the DDP model all-reduces gradients with all ranks, so ranks "
        "that run more steps than the others wait for them for ever (a hang)",
        agree.replace("to keep one decision for all ranks, ", "make every rank decide alike: ", 1),
    )
