from __future__ import annotations

import libcst as cst

from ddpify.check import helpers_b as hb
from ddpify.check.rule import Invalid, Rule
from ddpify.tree.cstutil import code

Guard = cst.If | cst.IfExp


class RankAsymmetricCollective(Rule):
    code = "DDP027"
    name = "rank-asymmetric-collective"
    message = "collective inside a rank guard: the other ranks never reach it and the job hangs"
    severity = "error"
    why = (
        "A collective — `dist.barrier`, `all_reduce`, `all_gather`, `broadcast`, `reduce`, `gather`, "
        "`scatter`, `ddpify.save` / `ddpify.barrier` (they contain a barrier), and the forward of a "
        "DDP-wrapped model (it broadcasts buffers and arms the gradient all-reduce) — completes only "
        "when every rank of the group calls it. Inside `if rank == 0:` rank 0 waits for peers that "
        "never come, until the NCCL timeout kills the job (discuss.pytorch.org/t/114522; "
        "talmolab/sleap-nn#437). Call collectives on every rank; in rank-0-only evaluation use the "
        "inner module (`ddpify.unwrap(model)`); let rank 0 decide and broadcast the decision. The "
        "balanced idiom — the same collective under complementary guards (`if local_rank not in "
        "[-1, 0]: barrier()` … `if local_rank == 0: barrier()`) or in both branches — is not reported."
    )
    valid = (
        """\
import torch
import torch.distributed as dist

if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
dist.barrier()
""",
        """\
import torch.distributed as dist

if args.local_rank not in [-1, 0]:
    dist.barrier()  # the others wait while rank 0 downloads
dataset = load_dataset()
if args.local_rank == 0:
    dist.barrier()
""",
        """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
if ddpify.is_main_process():
    with torch.no_grad():
        preview = ddpify.unwrap(model)(fixed_noise)
ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank])
if rank == 0:
    with torch.no_grad():
        val_loss = criterion(model(x_val), y_val)
    dist.barrier()
"""
        ),
        Invalid(
            """\
import ddpify.runtime as ddpify

if ddpify.is_main_process():
    ddpify.save(ddpify.unwrap(model).state_dict(), "best.pt")
"""
        ),
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._collectives: list[tuple[cst.Call, str, Guard | None]] = []
        self._wraps: list[hb.Wrap] = []
        self._assigned: dict[str, list[cst.Assign]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        for call in hb.calls(node):
            name = hb.collective(self, call)
            if name is not None:
                self._collectives.append((call, name, hb.selecting_rank_guard(self, call)))
        self._wraps = hb.ddp_wraps(self, node)
        self._assigned = hb.assignments(self, node) if self._wraps else {}
        for call, name, guard in self._collectives:
            if guard is not None and not self._balanced(call, name, guard):
                self.report(call, f"{name}() under `{code(guard.test)}`: the ranks that skip this branch never join it, so the job hangs")
        for call in hb.calls(node):
            self._check_forward(call)

    def _balanced(self, call: cst.Call, name: str, guard: Guard) -> bool:
        scope = hb.scope_of(self, call)
        for other, other_name, other_guard in self._collectives:
            if other is call or other_name != name or other_guard is None or hb.scope_of(self, other) is not scope:
                continue
            if code(other_guard.test) != code(guard.test) or hb.branches_exclusive(self, call, other):
                return True
        return False

    def _check_forward(self, call: cst.Call) -> None:
        model = code(call.func)
        wraps = [w for w in self._wraps if w.target == model]
        if not wraps:
            return
        guard = hb.selecting_rank_guard(self, call)
        if guard is None:
            return
        scope = hb.scope_of(self, call)
        if any(w.scope is scope for w in wraps) and hb.wrap_in_effect(self, self._wraps, self._assigned, call, model) is None:
            return
        self.report(
            call,
            f"forward of the DDP-wrapped {model} under `{code(guard.test)}`: DDP's forward is a collective "
            f"(buffer broadcast, gradient reduction), so the other ranks hang; use ddpify.unwrap({model}) here",
        )
