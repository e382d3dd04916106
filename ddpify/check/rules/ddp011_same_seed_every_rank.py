from __future__ import annotations

import functools

import libcst as cst

from ddpify.check import helpers_b as hb
from ddpify.check.helpers_a import ANY_RANK_TERM, enclosing_function, is_data_parallel, name_values, short
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, of_types


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
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._values: dict[str, list[cst.BaseExpression]] = {}
        self._module: cst.Module = cst.Module([])
        self._active = False

    def visit_Module(self, node: cst.Module) -> None:
        self._active = is_data_parallel(self, node)
        self._values = name_values(node)
        self._module = node

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
        if ANY_RANK_TERM.search(code(seed)):
            return True
        for name in of_types(seed, cst.Name):
            assert isinstance(name, cst.Name)
            if any(ANY_RANK_TERM.search(code(v)) for v in self._values.get(name.value, [])):
                return True
            if self._parameter_seeded_per_rank(call, name.value):
                return True
        return False

    def _parameter_seeded_per_rank(self, call: cst.Call, parameter: str) -> bool:
        """``def set_seed(seed): torch.manual_seed(seed)`` called as ``set_seed(s + rank)``."""
        function = enclosing_function(self, call)
        if function is None:
            return False
        params = [p.name.value for p in function.params.params]
        if parameter not in params:
            return False
        index = params.index(parameter)
        for caller in hb.calls(self._module):
            if hb.callee_name(caller) != function.name.value:
                continue
            for position, arg in enumerate(caller.args):
                matches = arg.keyword.value == parameter if arg.keyword is not None else position == index
                if matches and ANY_RANK_TERM.search(code(arg.value)):
                    return True
        return False
