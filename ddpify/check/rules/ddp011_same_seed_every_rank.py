from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.script import is_data_parallel
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, of_types

# Seeds that differ between processes without a rank: a DataLoader worker's (worker_init_fn).
_PER_PROCESS = re.compile(r"initial_seed|worker", re.I)


class SameSeedEveryRank(Rule):
    code = "DDP011"
    name = "same-seed-every-rank"
    message = "the same seed on every rank: augmentation, dropout and worker RNG streams repeat on all ranks"
    severity = "warning"
    why = (
        "Every process runs the same `torch.manual_seed(seed)` (or `random.seed`, "
        "`np.random.seed`), so all ranks draw identical random numbers: the same random crops and "
        "flips, the same dropout masks, the same DataLoader worker seeds. The ranks see different "
        "samples but transform them in lockstep, which wastes much of the augmentation that the "
        "larger effective batch was meant to average over; this is why DETR seeds with "
        "`args.seed + utils.get_rank()` (facebookresearch/detr#297, huggingface/transformers#37932). "
        "Seeding with `seed + rank` from the start is not right either: models initialised from "
        "the RNG, or datasets generated from it, must be identical on every rank. "
        "`ddpify.seed(torch.manual_seed, seed)` does both: the same seed on every rank until "
        "training starts, then `seed + rank` on ranks > 0. The fix (unsafe: random streams on ranks "
        "> 0 change) rewrites the call to it, as the converter does. Seeds whose expression mentions "
        "a rank (also through one variable, or through every caller of a `set_seed(seed)` helper) "
        "are not flagged."
    )
    fix = "unsafe"
    valid = (
        """\
import torch
import torch.distributed as dist

torch.manual_seed(args.seed + dist.get_rank())
""",
        """\
import random

import numpy as np
import torch
import ddpify.runtime as ddpify

ddpify.seed(torch.manual_seed, 42)
ddpify.seed(np.random.seed, 42)
ddpify.seed(random.seed, 42)
""",
        """\
import numpy as np
import torch.distributed as dist


def set_seed(seed):
    np.random.seed(seed)


set_seed(args.seed + dist.get_rank())
""",
        """\
import os
import torch
import torch.distributed as dist

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    ddp_rank = int(os.environ["RANK"])
    seed_offset = ddp_rank  # each process gets a different seed
else:
    seed_offset = 0
torch.manual_seed(1337 + seed_offset)
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.manual_seed(args.seed)
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

dist.init_process_group("nccl")
ddpify.seed(torch.manual_seed, args.seed)
""",
        ),
        Invalid(
            """\
import random

import numpy as np
import torch.distributed as dist

dist.init_process_group("gloo")
SEED = 0
random.seed(SEED)
np.random.seed(SEED)
""",
            """\
import random

import numpy as np
import torch.distributed as dist
import ddpify.runtime as ddpify

dist.init_process_group("gloo")
SEED = 0
ddpify.seed(random.seed, SEED)
ddpify.seed(np.random.seed, SEED)
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.manual_seed(args.seed + args.lora_rank)  # a LoRA rank is no process rank
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

dist.init_process_group("nccl")
ddpify.seed(torch.manual_seed, args.seed + args.lora_rank)  # a LoRA rank is no process rank
""",
        ),
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._active = False

    def visit_Module(self, node: cst.Module) -> None:
        self._active = is_data_parallel(self, node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active or not self.qualified(node) & names.SEED_FUNCTIONS or not node.args or any(a.star for a in node.args):
            return
        seed = node.args[0].value
        if self._per_rank(node, seed):
            return
        self.report(
            node,
            message=f"{short(node.func)}({short(seed)}) gives every rank the same seed: augmentation, dropout and worker RNG streams repeat on all ranks",
            replacement=functools.partial(rewrites.seeded, node),
        )

    def _per_rank(self, call: cst.Call, seed: cst.BaseExpression) -> bool:
        """The seed differs between ranks (``seed + rank``, also through a variable or a
        ``set_seed(seed)`` parameter) or between processes (a DataLoader worker's seed)."""
        if self.file.analysis.rank_tests.depends_on_rank(seed) or _PER_PROCESS.search(code(seed)):
            return True
        return any(self._parameter_seeded_per_rank(call, name.value) for name in of_types(seed, cst.Name))  # type: ignore[attr-defined]

    def _parameter_seeded_per_rank(self, call: cst.Call, parameter: str) -> bool:
        """``def set_seed(seed): torch.manual_seed(seed)`` called as ``set_seed(s + rank)``."""
        source = self.file.analysis.source
        function = source.enclosing_function(call)
        if function is None:
            return False
        params = [p.name.value for p in function.params.params]
        if parameter not in params:
            return False
        index = params.index(parameter)
        for caller in source.call_sites(function):
            for position, arg in enumerate(caller.args):
                matches = arg.keyword.value == parameter if arg.keyword is not None else position == index
                if matches and (self.file.analysis.rank_tests.depends_on_rank(arg.value) or _PER_PROCESS.search(code(arg.value))):
                    return True
        return False
