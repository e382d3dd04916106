from __future__ import annotations

import re

import libcst as cst

from ddpify.check.calls import every_call, runtime_function
from ddpify.check.places import start
from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import assignments, ddp_wraps, receiver, wrap_in_effect
from ddpify.tree.cstutil import callee_name, code, is_simple_reference

# `.apply(fn)` that re-initialises weights (not `.apply(set_bn_eval)`, which changes no parameter)
_INITIALISER = re.compile(r"init|weight|reset|xavier|kaiming|normal|uniform|orthogonal|trunc", re.I)


class ParamsChangedAfterWrap(Rule):
    code = "DDP019"
    opt_in = (
        "An initialiser that draws no random numbers, applied on every rank, changes nothing between ranks; "
        "the rule cannot tell such initialisers from random ones in another module."
    )
    name = "params-changed-after-wrap"
    message = "parameters changed after the DDP wrap: the ranks start from different weights"
    severity = "warning"
    why = (
        "DistributedDataParallel broadcasts rank 0's parameters and buffers once, when it is "
        "constructed; afterwards it only averages gradients. Whatever changes the weights after that "
        "on some ranks only — `load_state_dict` inside `if rank == 0:`, or `.apply(init_fn)` drawing "
        "random numbers from per-rank RNG streams — leaves the replicas different for the rest of "
        "training, silently (the DDP docstring: 'never try to change your model's parameters after "
        "wrapping'; discuss.pytorch.org/t/74564). Load and initialise before the wrap, on every rank "
        "(or on rank 0 only: the wrap's broadcast then copies it), as pytorch/examples and ddpify's "
        "converter do. Reported: `.apply(init_fn)` (a function named for initialisation) on the wrapped model "
        "(or its `.module`) after the wrap, "
        "and `load_state_dict` after the wrap inside a rank guard. Loading the same checkpoint on every "
        "rank after the wrap (the DDP tutorial does it) keeps the replicas equal and is not reported."
    )
    fix_notes = "No automatic fix."
    false_positives = "An initialiser that draws no random numbers, applied on every rank."
    valid = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = Net().to(rank)
if rank == 0:
    model.load_state_dict(torch.load("init.pt", map_location="cpu"))
model = DDP(model, device_ids=[rank])  # the wrap broadcasts rank 0's weights
""",
        """\
import torch
import ddpify.runtime as ddpify

model = Net()
model.apply(init_weights)
ddpify.load_state_dict(model, torch.load("ckpt.pt", map_location=ddpify.device()))
model = ddpify.prepare_model(model)
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

ddp_model = DDP(model, device_ids=[rank])
dist.barrier()
ddp_model.load_state_dict(torch.load(path, map_location={"cuda:0": f"cuda:{rank}"}))  # every rank
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net().to(rank), device_ids=[rank])
if dist.get_rank() == 0:
    model.module.load_state_dict(torch.load("best.pt", map_location="cpu"))
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net().to(rank), device_ids=[rank])
model.apply(init_weights)
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        wraps = ddp_wraps(self, node)
        if not wraps:
            return
        assigned = assignments(self, node)
        for call in every_call(node):
            changed = self._changed_model(call)
            if changed is None:
                continue
            method, target = changed
            wrapped = target[: -len(".module")] if target.endswith(".module") else target
            wrap = wrap_in_effect(self, wraps, assigned, call, wrapped)
            if wrap is None:
                continue
            line = start(self, wrap.statement)[0]
            context = self.file.analysis.context
            if context.local(call).selection.rank_dependent:
                guard = context.restriction(call, callers=False)
                self.report(
                    call,
                    f"{method} changes {target}'s parameters after the DDP wrap (line {line}) under `{code(guard) if guard is not None else 'a rank test'}` only: "
                    "the other ranks keep their weights and the replicas diverge; do it before wrapping",
                )
            elif method.endswith(".apply"):
                self.report(
                    call,
                    f"{method} re-initialises {target}'s parameters after the DDP wrap (line {line}): DDP broadcast the "
                    "weights at the wrap, so ranks with different RNG states now differ; initialise before wrapping",
                )

    def _changed_model(self, call: cst.Call) -> tuple[str, str] | None:
        """(how, model) for ``model.load_state_dict(...)``, ``model.apply(fn)``,
        ``ddpify.load_state_dict(model, ...)``."""
        name = callee_name(call)
        if name == "load_state_dict" and runtime_function(self, call) == "load_state_dict":
            if call.args and call.args[0].keyword is None and is_simple_reference(call.args[0].value):
                return "ddpify.load_state_dict", code(call.args[0].value)
            return None
        target = receiver(call)
        if name == "load_state_dict" and target is not None:
            return f"{target}.{name}", target
        if name == "apply" and target is not None and call.args and _INITIALISER.search(code(call.args[0].value)):
            return f"{target}.{name}", target
        return None
