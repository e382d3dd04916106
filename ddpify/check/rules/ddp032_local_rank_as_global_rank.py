from __future__ import annotations

import libcst as cst

from ddpify.analysis.ranks import Term
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.script import INIT_PROCESS_GROUP


class LocalRankAsGlobalRank(Rule):
    code = "DDP032"
    opt_in = (
        "It needs the number of nodes, which scripts mostly read from a configuration the analysis cannot "
        "follow; on one node the finding is wrong."
    )
    name = "local-rank-as-global-rank"
    message = "init_process_group(rank=<local rank>): on a multi-node run two processes claim each rank"
    severity = "error"
    why = (
        "`rank=` of `init_process_group` is the process's global rank, unique in the whole job. The "
        "local rank (LOCAL_RANK, the GPU index, the `mp.spawn` index) restarts at 0 on every node, so "
        "on two nodes two processes claim rank 0: the rendezvous hangs or fails with a duplicate "
        "rank, and the ranks of the second node are never filled. Pass the global rank: RANK from the "
        "environment, or `node_rank * gpus_per_node + local_rank` (pytorch/examples imagenet: "
        "`args.rank = args.rank * ngpus_per_node + gpu`). Not reported: a job whose world size is "
        "this machine's GPU count (`world_size=torch.cuda.device_count()`), one node by construction."
    )
    fix_notes = "No automatic fix: where the node rank comes from is the script's choice."
    false_positives = "A script that only ever runs on one node but sizes its world from a configuration value."
    valid = (
        """\
import os
import torch.distributed as dist

dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
""",
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, args):
    args.rank = args.node_rank * args.gpus_per_node + gpu
    dist.init_process_group("nccl", init_method=args.dist_url, rank=args.rank, world_size=args.world_size)


if __name__ == "__main__":
    mp.spawn(worker, args=(args,), nprocs=args.gpus_per_node)
""",
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, world_size):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=gpu, world_size=world_size)


if __name__ == "__main__":
    world_size = torch.cuda.device_count()  # this machine's GPUs: one node by construction
    mp.spawn(worker, args=(world_size,), nprocs=world_size)
""",
    )
    invalid = (
        Invalid(
            """\
import os
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl", rank=local_rank, world_size=int(os.environ["WORLD_SIZE"]))
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, args):
    dist.init_process_group("nccl", init_method=args.dist_url, rank=gpu, world_size=args.world_size)


if __name__ == "__main__":
    mp.spawn(worker, args=(args,), nprocs=args.gpus_per_node)
"""
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & INIT_PROCESS_GROUP:
            return
        rank = _keyword(node, "rank")
        if rank is None or self.file.analysis.rank_tests.term(rank) is not Term.LOCAL_RANK:
            return
        if self.file.analysis.single_node:
            return
        self.report(
            node,
            f"init_process_group(rank={short(rank)}) passes the local rank as the global rank: on a multi-node run "
            "every node has a rank 0; pass the global rank (RANK, or node_rank * gpus_per_node + local_rank)",
        )


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
