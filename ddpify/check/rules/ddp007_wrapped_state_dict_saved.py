from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import wrap_sites, wrapped_state_dict_saves
from ddpify.convert import rewrites
from ddpify.tree.cstutil import code


class WrappedStateDictSaved(Rule):
    code = "DDP007"
    name = "wrapped-state-dict-saved"
    message = "state_dict() of the DDP-wrapped model is saved: every key gets a 'module.' prefix"
    severity = "warning"
    why = (
        "DistributedDataParallel keeps the real model in its `.module` attribute, so the wrapper's "
        "`state_dict()` names every parameter `module.<name>` (NVIDIA/apex#647, "
        "pytorch/pytorch#41048). A checkpoint saved that way no longer loads into the plain model "
        "(single-GPU evaluation, inference, fine-tuning): `load_state_dict` fails with "
        '"Missing key(s) ... Unexpected key(s) module.features...". Save the unwrapped model\'s '
        "state instead. The fix writes `ddpify.unwrap(model).state_dict()`, exactly as the "
        "converter does; it works whether or not the model is wrapped (single process)."
    )
    fix = "safe"
    valid = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
""",
        """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
ddpify.save({"model": ddpify.unwrap(model).state_dict(), "optimizer": optimizer.state_dict()}, "ckpt.pt")
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

torch.save(model.state_dict(), "init.pt")  # before the wrap: no prefix yet
model = DDP(model)
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
if dist.get_rank() == 0:
    torch.save(model.state_dict(), "model.pt")
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import ddpify.runtime as ddpify

model = DDP(model, device_ids=[local_rank])
if dist.get_rank() == 0:
    torch.save(ddpify.unwrap(model).state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

net = DistributedDataParallel(net)
checkpoint = {"epoch": epoch, "model": net.state_dict()}
if dist.get_rank() == 0:
    torch.save(checkpoint, "ckpt.pt")
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
import ddpify.runtime as ddpify

net = DistributedDataParallel(net)
checkpoint = {"epoch": epoch, "model": ddpify.unwrap(net).state_dict()}
if dist.get_rank() == 0:
    torch.save(checkpoint, "ckpt.pt")
""",
        ),
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._saved: set[cst.Call] = set()

    def visit_Module(self, node: cst.Module) -> None:
        self._saved = set(wrapped_state_dict_saves(self, node, wrap_sites(self, node)))

    def visit_Call(self, node: cst.Call) -> None:
        if node in self._saved:
            model = code(node.func.value)  # type: ignore[attr-defined]
            self.report(
                node,
                message=f"{model}.state_dict() of the DDP-wrapped model is saved: every key gets a 'module.' prefix",
                replacement=functools.partial(rewrites.unwrapped_state_dict, node),
            )
