from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites


class PrintOnEveryRank(Rule):
    code = "DDP012"
    name = "print-on-every-rank"
    message = "print/progress bar on every rank: N copies of every line"
    severity = "note"
    why = (
        "Each process prints, so logs repeat N times and tqdm bars overwrite one another "
        "(tqdm/tqdm#1294). Print on rank 0: `ddpify.print(...)`, and give progress bars "
        "`disable=not ddpify.is_main_process()`, as the converter does. Not reported: output under a "
        "rank test or after an early exit (also at every call of the function it is in), in the process "
        "that calls `mp.spawn` before the workers start, `print` after `builtins.print` was replaced on "
        "the other ranks (`setup_for_distributed(is_master)`, as DETR/DeiT/MAE do), and lines that name "
        'their rank (`print(f"[GPU{rank}] ...")`): one per rank is what they mean.'
    )
    fix = "safe"
    valid = (
        """\
import torch.distributed as dist

if dist.get_rank() == 0:
    print("epoch done")
""",
        """\
import ddpify.runtime as ddpify
from tqdm import tqdm

ddpify.print("epoch done")
for batch in tqdm(loader, disable=not ddpify.is_main_process()):
    pass
""",
        """\
import builtins as __builtin__
import torch.distributed as dist


def setup_for_distributed(is_master):
    builtin_print = __builtin__.print

    def print(*args, **kwargs):
        if is_master or kwargs.pop("force", False):
            builtin_print(*args, **kwargs)

    __builtin__.print = print


def main(args):
    dist.init_process_group("nccl")
    setup_for_distributed(dist.get_rank() == 0)
    print("training starts")  # the other ranks' print is a no-op now
""",
        """\
import builtins
import torch.distributed as dist

if dist.get_rank() != 0:
    builtins.print = lambda *args, **kwargs: None
print("only rank 0 gets here with a real print")
""",
        """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    print(f"[GPU{rank}] starting")  # one line per rank, on purpose


def main():
    print("launching 2 workers")  # the parent, before the workers start: once
    mp.spawn(worker, args=(2,), nprocs=2)


if __name__ == "__main__":
    main()
""",
        """\
import torch.distributed as dist


def log(message):
    print(message)


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if args.rank % ngpus_per_node == 0:
        log("epoch done")  # every call of log() is guarded
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist

print("epoch done")
""",
            """\
import torch.distributed as dist
import ddpify.runtime as ddpify

ddpify.print("epoch done")
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from tqdm import tqdm

for batch in tqdm(loader):
    pass
""",
            """\
import torch.distributed as dist
from tqdm import tqdm
import ddpify.runtime as ddpify

for batch in tqdm(loader, disable=not ddpify.is_main_process()):
    pass
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    print("epoch done")  # each worker prints it


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
            """\
import torch.distributed as dist
import torch.multiprocessing as mp
import ddpify.runtime as ddpify


def worker(rank, world_size):
    ddpify.print("epoch done")  # each worker prints it


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified(node)
        printing = bool(qualified & names.PRINT)
        if not printing and not qualified & names.TQDM:
            return
        context = self.file.analysis.context
        if not context.every_rank(node) or context.tagged_per_rank(node):
            return
        if printing:
            if not context.print_silenced(node):
                self.report(node, replacement=functools.partial(rewrites.rank_zero_print, node))
            return
        quiet = rewrites.quiet_progress_bar(node)
        if quiet is not None:
            self.report(node, replacement=quiet)
