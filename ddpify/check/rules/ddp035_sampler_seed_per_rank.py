from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.seeds import seeds

SAMPLER = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})


class SamplerSeedPerRank(Rule):
    code = "DDP035"
    opt_in = (
        "A per-rank sampler seed is often overwritten by a broadcast value later, which the analysis does not "
        "follow; measured only on the corpus it was written for."
    )
    name = "sampler-seed-per-rank"
    message = "DistributedSampler(seed=...) differs between ranks: the shards overlap and samples are skipped"
    severity = "error"
    why = (
        "A DistributedSampler shards one permutation of the dataset: every rank shuffles with "
        "`seed + epoch` and takes every N-th index. That only partitions the data when all ranks draw "
        "the same permutation, i.e. pass the same `seed`. A seed that names the rank, or is drawn from "
        "an RNG each process seeded differently or not at all (`seed = random.randint(1, 10000)` when "
        "the configuration sets none, as KAIR does), gives each rank its own permutation: some samples "
        "are seen by several ranks each epoch, others by none. Pass a seed that is the same on every "
        "rank (a constant, or rank 0's value broadcast with `dist.broadcast_object_list`)."
    )
    fix_notes = "No automatic fix: which value every rank should agree on is the script's choice."
    false_positives = "A per-rank seed that a later line overwrites with a broadcast value the analysis does not follow."
    valid = (
        """\
import torch.distributed as dist
from torch.utils.data import DistributedSampler

sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed)
""",
        """\
import random

import torch.distributed as dist
from torch.utils.data import DistributedSampler

random.seed(0)
seed = random.randint(1, 10000)  # drawn after the same seed on every rank: the same number
sampler = DistributedSampler(dataset, seed=seed)
""",
    )
    invalid = (
        Invalid(
            """\
import random

import torch.distributed as dist
from torch.utils.data import DistributedSampler

seed = opt["manual_seed"]
if seed is None:
    seed = random.randint(1, 10000)  # every process draws its own
sampler = DistributedSampler(dataset, shuffle=True, drop_last=True, seed=seed)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DistributedSampler

sampler = DistributedSampler(dataset, seed=args.seed + dist.get_rank())
"""
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & SAMPLER:
            return
        seed = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "seed"), None)
        if seed is None or not seeds(self).varies_per_process(seed):
            return
        self.report(
            node,
            f"DistributedSampler(seed={short(seed)}): the seed differs between ranks, so each rank shuffles its own "
            "permutation and the shards overlap; pass the same seed on every rank",
        )
