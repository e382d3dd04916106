from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import wrap_sites, wrapped_state_dict_saves, wrapped_when
from ddpify.convert import rewrites
from ddpify.tree.cstutil import code, is_method_call


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
        '(pytorch/pytorch#3805 "unexpected key module.features..."). Which of the two a given '
        "checkpoint file holds is not visible in the code, so load through a helper that accepts "
        "both: the fix writes `ddpify.load_state_dict(model, state)`, which loads into the "
        "unwrapped model and strips a `module.` prefix when every key has one, exactly as the "
        "converter does. Flagged: loads into a name that holds the wrap at that point, and loads "
        "into the plain model in a script that saves the wrapper's own state_dict (DDP007)."
    )
    fix = "safe"
    valid = (
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.module.load_state_dict(torch.load("model.pt", map_location="cpu"))
""",
        """\
import torch
import ddpify.runtime as ddpify

ddpify.load_state_dict(model, torch.load("model.pt", map_location=ddpify.device()))
model = ddpify.prepare_model(model)
optimizer.load_state_dict(state["optimizer"])
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))  # plain model, plain file
model = DDP(model)
""",
    )
    invalid = (
        Invalid(
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
model.load_state_dict(torch.load("model.pt", map_location="cpu"))
""",
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
import ddpify.runtime as ddpify

model = DDP(model, device_ids=[local_rank])
ddpify.load_state_dict(model, torch.load("model.pt", map_location="cpu"))
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
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import ddpify.runtime as ddpify


def main():
    if resume:
        ddpify.load_state_dict(model, torch.load("last.pt", map_location="cpu")["model"], strict=False)
    model = DDP(model)
    train(model)
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, "last.pt")
""",
        ),
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._sites: dict[str, list[cst.Assign]] = {}
        self._saves_wrapped: set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        self._sites = wrap_sites(self, node)
        self._saves_wrapped = {
            code(call.func.value)  # type: ignore[attr-defined]
            for call in wrapped_state_dict_saves(self, node, self._sites)
        }

    def visit_Call(self, node: cst.Call) -> None:
        if not is_method_call(node, "load_state_dict") or not node.args:
            return
        model = code(node.func.value)  # type: ignore[attr-defined]
        if model not in self._sites:
            return
        if wrapped_when(self, node, model, self._sites):
            message = f"{model}.load_state_dict on the DDP-wrapped model: it expects 'module.' keys, so a plain checkpoint does not load"
        elif model in self._saves_wrapped:
            message = f"{model}.load_state_dict on the plain model, but this script saves {model}.state_dict() of the wrapper ('module.' keys): resuming fails"
        else:
            return
        self.report(node, message=message, replacement=functools.partial(rewrites.unwrapped_load_state_dict, node))
