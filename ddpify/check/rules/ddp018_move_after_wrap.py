from __future__ import annotations

import re

import libcst as cst

from ddpify.check.calls import every_call, keyword_value, nodes
from ddpify.check.places import scope_of, start
from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import Wrap, assignments, ddp_wraps, receiver, wrap_in_effect
from ddpify.tree.cstutil import callee_name, code, is_name, of_types

_MOVES = frozenset({"to", "cuda", "to_empty"})
_DEVICE_WORDS = re.compile(r"device|cuda|gpu|rank", re.I)
_TORCH_DDP = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})


class MoveAfterWrap(Rule):
    code = "DDP018"
    default = True
    name = "move-after-wrap"
    message = "model moved to a device after the DDP wrap, or wrapped with device_ids while still on the CPU"
    severity = "error"
    why = (
        "DistributedDataParallel registers its gradient hooks and communication buckets for the "
        "parameters as they are when it is constructed, and with `device_ids=[i]` it expects them on "
        "GPU i already. Wrapping a CPU model with device_ids fails ('DistributedDataParallel device_ids "
        "and output_device arguments only work with single-device/multiple-device GPU modules', "
        "facebookresearch/detectron2#5146), and calling `.to()`/`.cuda()` on the wrapped model "
        "afterwards moves the parameters behind DDP's back (pytorch/pytorch#46821). The order is "
        "always: build → `.to(device)` → (SyncBatchNorm) → wrap, which is what `ddpify.prepare_model` "
        "does. Only moves in the same function as the wrap, after it, are reported, and a wrap with "
        "device_ids only when its model is built in that function by a class constructor without a "
        "device argument and moved nowhere in the file."
    )
    fix_notes = "No automatic fix."
    false_positives = "None known."
    valid = (
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = Net().to(local_rank)
model = DDP(model, device_ids=[local_rank])
""",
        """\
import ddpify.runtime as ddpify

model = Net()
model.to(ddpify.device())
model = ddpify.prepare_model(model)
probe = probe.to(ddpify.device())
""",
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

if distributed:
    model = DDP(model.cuda(), device_ids=[gpu])
else:
    model = model.cuda()  # the other branch: never wrapped
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = Net()
model = DDP(model)
model = model.cuda()
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank):
    model = Net()
    ddp_model = DDP(model, device_ids=[rank])
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        wraps = ddp_wraps(self, node)
        if not wraps:
            return
        assigned = assignments(self, node)
        for call in every_call(node):
            name = callee_name(call)
            target = receiver(call)
            if name not in _MOVES or target is None or not isinstance(call.func, cst.Attribute):
                continue
            wrapped = target[: -len(".module")] if target.endswith(".module") else target
            wrap = wrap_in_effect(self, wraps, assigned, call, wrapped)
            if wrap is not None:
                line = start(self, wrap.statement)[0]
                self.report(call, f"{target}.{name}() after {wrapped} was wrapped in DDP (line {line}): move the model before wrapping it")
        moved_anywhere = self._moved(node, assigned)
        for wrap in wraps:
            self._check_device_ids(wrap, assigned, moved_anywhere)

    def _moved(self, module: cst.Module, assigned: dict[str, list[cst.Assign]]) -> set[str]:
        moved: set[str] = set()
        for call in every_call(module):
            target = receiver(call)
            if callee_name(call) in _MOVES and target is not None:
                moved.add(target)
        for target, statements in assigned.items():
            for assign in statements:
                if _places_on_device(assign.value):
                    moved.add(target)
        return moved

    def _check_device_ids(self, wrap: Wrap, assigned: dict[str, list[cst.Assign]], moved: set[str]) -> None:
        if not self.qualified(wrap.call) & _TORCH_DDP:
            return
        device_ids = keyword_value(wrap.call, "device_ids")
        if device_ids is None or is_name(device_ids, "None"):
            return
        model = wrap.model
        if model is None or model in moved:
            return
        built_here = [a for a in assigned.get(model, []) if scope_of(self, a) is wrap.scope and a is not wrap.statement]
        if not built_here or not all(_constructed_on_cpu(a.value) for a in built_here) or _device_context(self.file.module):
            return
        self.report(
            wrap.call,
            f"DDP(..., device_ids=...) wraps {model}, which is never moved to a device: call {model}.to(device) before wrapping it",
        )


def _constructed_on_cpu(value: cst.BaseExpression) -> bool:
    """``Net()``, ``nn.Linear(4, 2)``: a class built right here, with no device argument (a
    factory function such as ``build_model(cfg)`` may move the model itself)."""
    if not isinstance(value, cst.Call):
        return False
    name = callee_name(value)
    return bool(name) and name[0].isupper() and not _DEVICE_WORDS.search(code(value))  # type: ignore[index]


def _places_on_device(value: cst.BaseExpression) -> bool:
    for call in of_types(value, cst.Call):
        assert isinstance(call, cst.Call)
        if callee_name(call) in _MOVES or any(a.keyword is not None and a.keyword.value == "device" for a in call.args):
            return True
    return False


def _device_context(module: cst.Module) -> bool:
    """``with torch.device("cuda"):`` / ``set_default_device``: models are built on a device."""
    return any(n.value == "set_default_device" for n in nodes(module, cst.Name)) or any(
        "device" in code(item.item) for w in nodes(module, cst.With) for item in w.items
    )
