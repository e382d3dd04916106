from __future__ import annotations

import functools

import libcst as cst

from ddpify.analysis.ranks import LEAD, MAIN, Ranks, RankSelection
from ddpify.check import fixes
from ddpify.check.rule import Import, Invalid, Rule, short
from ddpify.check.writes import SAVE_FUNCTIONS, is_save_call, singleton_io
from ddpify.convert import rewrites
from ddpify.tree.cstutil import of_types


class LocalRankGuard(Rule):
    code = "DDP006"
    name = "local-rank-guard"
    message = "I/O guarded by the local rank: on a multi-node run local rank 0 of every node does it"
    severity = "warning"
    why = (
        "LOCAL_RANK is the process's index on its own node, so `if local_rank == 0:` (or "
        '`args.local_rank in [-1, 0]`, `os.environ["LOCAL_RANK"] == "0"`) is true once per '
        "node. On one node that is the same as rank 0, which is why the bug survives testing; on "
        "several nodes every node's first process writes the checkpoint, opens a wandb run or a "
        "SummaryWriter, so shared files are written concurrently and get corrupted "
        "(NVIDIA/apex#886) and runs are duplicated. PyTorch's own examples show both: "
        "multigpu_torchrun.py guards with `gpu_id == 0`, multinode.py with `global_rank == 0`. "
        "Test the global rank instead: `dist.get_rank() == 0`. A local-rank guard stays right for "
        "per-node work such as downloading to a node-local disk, so only guards around saves and "
        "loggers are reported (a print guarded that way is one line per node: not worth a report). "
        "Once-per-node tests are `local_rank == 0`, `args.local_rank < 1`, `not args.local_rank`, "
        '`int(os.environ.get("LOCAL_RANK", -1)) in [-1, 0]`, `accelerator.is_local_main_process`, '
        "`rank % ngpus_per_node == 0` (pytorch/examples imagenet), `args.gpu == 0` in a script that "
        "spawns its workers, and variables or helpers of the file that hold such a test. A "
        "`torch.save` that runs once per node through its callers or an early exit "
        "(`if args.rank % ngpus_per_node != 0: return`) is reported at the save. Not reported in a "
        "script that can only run on one node, where the local rank is the global rank: its "
        'rendezvous is forced to this machine (`init_method="tcp://127.0.0.1:23456"`, '
        '`os.environ["MASTER_ADDR"] = "localhost"`, `args.dist_url = "tcp://127.0.0.1:..."`; a '
        "default that the command line can override does not count) or its world is this machine's "
        "GPU count (`world_size=torch.cuda.device_count()`, or, with no node rank input, "
        "`nprocs = torch.cuda.device_count()` as the divisor of an `all_reduce`d sum: "
        "`reduce_mean(loss, nprocs)`), nor in a module that does not join the process group itself "
        "when every project file that imports it (up to five imports up, packages included) and "
        "joins the group is such a script (DBNet's `tools/train.py`). Nor for a helper's mode "
        "parameter left at its default: `is_master(args)` of `def is_master(args, local=False)` "
        "tests the global rank."
    )
    default = True
    fix = "unsafe"
    fix_notes = (
        "The fix replaces the local-rank part of the test (only that part: `and epoch % 5 == 0` "
        "stays) by `(not dist.is_initialized() or dist.get_rank() == 0)`, which is also true in a "
        "single-process run. It is unsafe because a guard that also holds per-node work (a download "
        "to local disk) would then do that work on one node only. A save reported through its "
        "callers gets no fix: the guard to change is elsewhere."
    )
    false_positives = "A guard around a write to node-local storage (per-node work) that also logs."
    valid = (
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, ngpus):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=gpu, world_size=ngpus)
    if gpu == 0:  # one node by construction: the local rank is the global rank
        torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    mp.spawn(worker, args=(torch.cuda.device_count(),), nprocs=torch.cuda.device_count())
""",
        """\
import torch
import torch.distributed as dist

if dist.get_rank() == 0:
    torch.save(model.state_dict(), "model.pt")
""",
        """\
import os
import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
if local_rank == 0:
    download_dataset("/local/scratch")  # per-node work: the local rank is right here
if local_rank == 0 and dist.get_rank() == 0:
    torch.save(model.state_dict(), "model.pt")
""",
        """\
import torch.distributed as dist

is_master = local_rank == 0
if is_master:
    print("epoch done")  # once per node: a line per node, not worth a report
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist

if args.local_rank in [-1, 0]:
    torch.save(model.module.state_dict(), "model.pt")
""",
            fixed="""\
import torch
import torch.distributed as dist

if not dist.is_initialized() or dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import os
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

if os.environ["LOCAL_RANK"] == "0":
    writer = SummaryWriter("runs")
""",
            fixed="""\
import os
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

if not dist.is_initialized() or dist.get_rank() == 0:
    writer = SummaryWriter("runs")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

if args.local_rank < 1 and epoch % 5 == 0:
    torch.save(model.module.state_dict(), f"epoch{epoch}.pt")
""",
            fixed="""\
import torch
import torch.distributed as dist

if (not dist.is_initialized() or dist.get_rank() == 0) and epoch % 5 == 0:
    torch.save(model.module.state_dict(), f"epoch{epoch}.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0:
        save_checkpoint({"epoch": 1}, is_best)


mp.spawn(main_worker, nprocs=2, args=(2, args))
""",
            fixed="""\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if not dist.is_initialized() or dist.get_rank() == 0:
        save_checkpoint({"epoch": 1}, is_best)


mp.spawn(main_worker, nprocs=2, args=(2, args))
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def checkpoint(state, args, ngpus_per_node):
    if args.rank % ngpus_per_node != 0:
        return
    torch.save(state, "checkpoint.pth")  # every node's first GPU writes the shared file


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.node * ngpus_per_node + gpu
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
    checkpoint({"epoch": 1}, args, ngpus_per_node)


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=2, args=(2, args))
"""
        ),
    )

    def visit_If(self, node: cst.If) -> None:
        rank_tests = self.file.analysis.rank_tests
        if not _once_per_node(rank_tests.ranks(node.test)) or self.file.analysis.single_node:
            return
        what = self._guarded_io(node.body)
        if not what:
            return
        parts = rank_tests.local_main_parts(node.test)  # what the converter rewrites, too
        replacement = None
        imports: tuple[Import, ...] = ()
        if parts:
            test, imports = fixes.main_process_test(self.file, node)
            replacement = functools.partial(rewrites.main_process_parts, node.test, parts, test)
        self.report(
            node.test,
            message=f"`{short(node.test)}` tests the local rank: on a multi-node run local rank 0 of every node runs {', '.join(what)}; test the global rank",
            replacement=replacement,
            imports=imports,
        )

    def visit_Call(self, node: cst.Call) -> None:
        """A save that runs once per node through its callers or an early exit (the guard is
        not an ``if`` around it that ``visit_If`` reports): every node writes the same file."""
        if not is_save_call(self, node) or not self.qualified(node) & SAVE_FUNCTIONS:
            return
        context = self.file.analysis.context
        if not _once_per_node(context.ranks(node)) or self.file.analysis.output.tagged_per_rank(node) or self.file.analysis.single_node:
            return
        test = context.restriction(node)
        guard = self.parent(test) if test is not None else None
        if isinstance(guard, cst.If) and guard.test is test and self._guarded_io(guard.body):
            return  # that `if` is reported itself
        where = f"`{short(test)}` tests" if test is not None else "its callers test"
        self.report(
            node,
            message=f"{short(node.func)}(...) runs once per node ({where} the local rank): on a multi-node run every node writes the same file; test the global rank",
        )

    def _guarded_io(self, body: cst.BaseSuite) -> list[str]:
        """What the guarded code writes once per job; a print alone is not worth a report (one
        line per node)."""
        found: list[str] = []
        for call in of_types(body, cst.Call):
            assert isinstance(call, cst.Call)
            what = singleton_io(self, call)
            if what and what != "print" and what not in found:
                found.append(what)
        return found


def _once_per_node(ranks: Ranks) -> bool:
    """Once per node: not a flag that surely holds on the main rank and only maybe on the other
    nodes' local rank 0, a local-rank test on one path and a global-rank test on another
    (HybrIK's ``opt.log``, set per launcher)."""
    surely_main_only = bool(ranks.must & MAIN) and not ranks.must & LEAD
    return ranks.selection is RankSelection.LOCAL_MAIN and not surely_main_only
