from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.helpers import rank_guard
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
        "other ranks wait at a barrier, as the converter does. A save guarded by a rank test is fine."
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
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualified(node) & names.TORCH_SAVE and rank_guard(self, node) is None:
            self.report(node, replacement=functools.partial(rewrites.rank_zero_save, node))
