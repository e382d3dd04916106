from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites


class SaveOnEveryRank(Rule):
    code = "DDP005"
    name = "save-on-every-rank"
    message = "torch.save runs on every rank: N processes write the same file at once"
    severity = "error"
    why = (
        "Every process executes the script, so an unguarded `torch.save` writes the checkpoint N "
        "times concurrently; files end up truncated or corrupt (NVIDIA/apex#886) and the others "
        "may read a half-written file. The fix uses `ddpify.save`: rank 0 writes atomically and the "
        "other ranks wait at a barrier, as the converter does. A save that runs on some ranks only is "
        "fine: under a rank test (`if rank == 0:`, `if master_process:`, `if args.rank % ngpus_per_node "
        "== 0:`), after an early exit (`if rank != 0: return`), in a function every call of which is so "
        "guarded, or in the process that calls `mp.spawn`; so is a save to a path that names the rank "
        '(`f"model_rank{rank}.pt"`), one file per rank.'
    )
    fix = "safe"
    valid = (
        """\
import torch
import torch.distributed as dist

if dist.get_rank() == 0:
    torch.save(model.state_dict(), "model.pt")
""",
        """\
import torch
import ddpify.runtime as ddpify

ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")
""",
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def save_checkpoint(state, filename="checkpoint.pth.tar"):
    torch.save(state, filename)  # every call of this helper is under a once-per-node guard


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0:
        save_checkpoint({"epoch": 1})


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=2, args=(2, args))
""",
        """\
import torch
import torch.distributed as dist


def checkpoint(model, rank):
    if rank != 0:
        return
    torch.save(model.state_dict(), "model.pt")
""",
        """\
import os
import torch
import torch.distributed as dist

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    master_process = int(os.environ["RANK"]) == 0
else:
    master_process = True
if master_process:
    torch.save(model.state_dict(), "ckpt.pt")
""",
        """\
import torch
import torch.distributed as dist

torch.save(model.state_dict(), f"model_rank{dist.get_rank()}.pt")  # a file per rank
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist

torch.save(model.module.state_dict(), "model.pt")
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

ddpify.save(model.module.state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist


def save(model):
    torch.save(model.state_dict(), "model.pt")


if dist.get_rank() == 0:
    save(model)
save(model)  # this call is on every rank
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify


def save(model):
    ddpify.save(model.state_dict(), "model.pt")


if dist.get_rank() == 0:
    save(model)
save(model)  # this call is on every rank
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & names.TORCH_SAVE:
            return
        context = self.file.analysis.context
        if context.every_rank(node) and not context.tagged_per_rank(node):  # f"model_rank{rank}.pt": a file per rank
            self.report(node, replacement=functools.partial(rewrites.rank_zero_save, node))
