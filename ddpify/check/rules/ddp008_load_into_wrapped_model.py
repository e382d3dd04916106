from __future__ import annotations

import functools

import libcst as cst

from ddpify.check import fixes
from ddpify.check.checkpoints import Checkpoints, Load, checkpoints
from ddpify.check.rule import Fixability, Invalid, Rule


class LoadIntoWrappedModel(Rule):
    code = "DDP008"
    name = "load-into-wrapped-model"
    message = "load_state_dict on the DDP-wrapped model: it expects 'module.' keys, so a plain checkpoint does not load"
    severity = "warning"
    why = (
        "The DDP wrapper names its parameters `module.<name>`. Loading a checkpoint saved from the "
        "plain model (or with `model.module.state_dict()`) into the wrapper fails with "
        '"Missing key(s) in state_dict: module.features...", and a checkpoint saved from the '
        "wrapper fails the other way round when loaded into the plain model before wrapping "
        '(pytorch/pytorch#3805 "unexpected key module.features..."); with `strict=False` either '
        "one silently loads nothing. Reported: a load into the wrapper when this script saves the "
        "plain model's state, or saves nothing (the file comes from elsewhere), or wraps the model "
        "only in some runs (the keys then depend on how the checkpoint was made); and a load into "
        "the plain model of the checkpoint entry this script saves from the wrapper. Not reported: "
        "a resume checkpoint saved and loaded through a wrapper that is always there (a run "
        "without it stops: `else: raise NotImplementedError(...)`), exported "
        "plain weights loaded into the plain model before the wrap, and loads whose code strips "
        "the `module.` prefix itself, a load into a local variable of another function than the "
        "wrap's (its own `model = make_model()`), and the script's own resume of the entry it saves "
        "from a model wrapped only in some runs (`if world_size > 1: encoder = DDP(encoder)`): saved "
        "and loaded through the same wrap, the keys match in every run of one launch shape."
    )
    default = True
    fix = "safe"
    fix_notes = (
        "Only a load into an always-present wrapper is fixed, to `model.module.load_state_dict(...)`: "
        "safe when this script saves the plain model's state (the fix makes load and save agree), "
        "unsafe when the checkpoint comes from elsewhere (its layout is not visible). Other cases get "
        "no fix: the key layout to change is the save's (DDP007)."
    )
    false_positives = "A load into the wrapper of a file written by another script through its wrapper."
    valid = (
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.module.load_state_dict(torch.load("model.pt", map_location="cpu"))
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train_worker(rank):
    model = DDP(make_model().to(rank), device_ids=[rank])
    train(model)


def load_trained_model():
    model = make_model()  # another function's local `model`: never the wrapper
    model.load_state_dict(torch.load("final.pt"))
    return model
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))  # plain model, plain file
model = DDP(model)
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])  # always wrapped
ckpt = torch.load("checkpoint.pth", map_location="cpu")
model.load_state_dict(ckpt["model"])  # the same 'module.' keys it saves below
torch.save({"model": model.state_dict()}, "checkpoint.pth")
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

state = torch.load(args.resume, map_location="cpu")["model"]
model.load_state_dict({k.removeprefix("module."): v for k, v in state.items()})
model = DDP(model)
torch.save({"model": model.state_dict()}, "checkpoint.pth")
""",
    )
    invalid = (
        Invalid(
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.load_state_dict(torch.load("model.pt", map_location="cpu"))
torch.save(model.module.state_dict(), "model.pt")
""",
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.module.load_state_dict(torch.load("model.pt", map_location="cpu"))
torch.save(model.module.state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.load_state_dict(torch.load(args.pretrained, map_location="cpu"))
""",
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.module.load_state_dict(torch.load(args.pretrained, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    if resume:
        model.load_state_dict(torch.load("last.pt", map_location="cpu")["model"], strict=False)
    model = DDP(model)
    train(model)
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, "last.pt")
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        found = checkpoints(self)
        for load in found.loads:
            if load.helper or load.aware:
                continue
            if load.wrapped:
                self._into_wrapper(found, load)
            elif any(save.wrapped and found.paired(save, load) for save in found.saves):
                self.report(
                    load.call,
                    message=f"{load.model}.load_state_dict on the plain model, but this script saves that checkpoint from the DDP wrapper ('module.' keys): resuming fails",
                )

    def _into_wrapper(self, found: Checkpoints, load: Load) -> None:
        saves = found.saves_of(load.model)
        if not found.always.get(load.model, False):
            if any(save.wrapped and found.paired(save, load) for save in saves):
                return  # the script's own resume: saved and loaded through the same wrap, whichever way a run goes
            message = (
                f"{load.model}.load_state_dict while {load.model} is wrapped in DDP only in some runs: a checkpoint made "
                "by the other kind of run has the other key layout ('module.' or not) and does not load"
            )
            self.report(load.call, message=message)
            return
        if any(save.wrapped for save in saves):
            return  # saved and loaded through the same, always-present wrapper: the keys match
        message = f"{load.model}.load_state_dict on the DDP-wrapped model: it expects 'module.' keys, so a plain checkpoint does not load"
        safety: Fixability = "safe" if saves else "unsafe"
        self.report(load.call, message=message, replacement=functools.partial(_into_module, load.call), safety=safety)


def _into_module(call: cst.Call) -> cst.Call:
    func = call.func
    assert isinstance(func, cst.Attribute)
    return call.with_changes(func=func.with_changes(value=fixes.unwrapped(func.value, always_wrapped=True)))
