from __future__ import annotations

import functools

import libcst as cst

from ddpify.analysis.ranks import RankSelection
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.writes import singleton_io
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
        "SummaryWriter and prints, so shared files are written concurrently and get corrupted "
        "(NVIDIA/apex#886) and runs are duplicated. PyTorch's own examples show both: "
        "multigpu_torchrun.py guards with `gpu_id == 0`, multinode.py with `global_rank == 0`. "
        "Test the global rank instead: `dist.get_rank() == 0` or `ddpify.is_main_process()`. "
        "A local-rank guard stays right for per-node work such as downloading to a node-local disk, "
        "so only guards around saves, loggers and prints are reported. Once-per-node tests are "
        "`local_rank == 0`, `args.local_rank < 1`, `not args.local_rank`, "
        '`int(os.environ.get("LOCAL_RANK", -1)) in [-1, 0]`, `accelerator.is_local_main_process`, '
        "`rank % ngpus_per_node == 0` (pytorch/examples imagenet), `args.gpu == 0` in a script that spawns "
        "its workers, and variables or helpers of the file that hold such a test. The fix tests "
        "`ddpify.is_main_process()` instead (only the local-rank part of a compound test changes), "
        "exactly as the converter does; it is unsafe because a guard that also holds per-node "
        "work (a download to local disk) would then do that work on one node only."
    )
    fix = "unsafe"
    valid = (
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
    print("training starts")
""",
        """\
import torch
import ddpify.runtime as ddpify

if args.local_rank != -1:
    torch.cuda.set_device(args.local_rank)
ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")
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
import ddpify.runtime as ddpify

if ddpify.is_main_process():
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
import ddpify.runtime as ddpify

if ddpify.is_main_process():
    writer = SummaryWriter("runs")
""",
        ),
        Invalid(
            """\
import torch.distributed as dist

is_master = local_rank == 0
if is_master:
    print("epoch done")
""",
            fixed="""\
import torch.distributed as dist
import ddpify.runtime as ddpify

is_master = local_rank == 0
if ddpify.is_main_process():
    print("epoch done")
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
import ddpify.runtime as ddpify

if ddpify.is_main_process() and epoch % 5 == 0:
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
import ddpify.runtime as ddpify


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if ddpify.is_main_process():
        save_checkpoint({"epoch": 1}, is_best)


mp.spawn(main_worker, nprocs=2, args=(2, args))
""",
        ),
    )

    def visit_If(self, node: cst.If) -> None:
        rank_tests = self.file.analysis.rank_tests
        if rank_tests.selection(node.test) is not RankSelection.LOCAL_MAIN:
            return
        what = self._guarded_io(node.body)
        if not what:
            return
        parts = rank_tests.local_main_parts(node.test)  # what the converter rewrites, too
        self.report(
            node.test,
            message=f"`{short(node.test)}` tests the local rank: on a multi-node run local rank 0 of every node runs {', '.join(what)}; test the global rank",
            replacement=functools.partial(rewrites.main_process_parts, node.test, parts) if parts else None,
        )

    def _guarded_io(self, body: cst.BaseSuite) -> list[str]:
        found: list[str] = []
        for call in of_types(body, cst.Call):
            assert isinstance(call, cst.Call)
            what = singleton_io(self, call)
            if what and what not in found:
                found.append(what)
        return found
