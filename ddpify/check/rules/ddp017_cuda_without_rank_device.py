from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from ddpify.analysis.ranks import DISTRIBUTED
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.script import INIT_PROCESS_GROUP, is_data_parallel, pins_device_per_rank
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import is_simple_reference, of_types


class CudaWithoutRankDevice(Rule):
    code = "DDP017"
    default = True
    name = "cuda-without-rank-device"
    message = "bare CUDA device with no per-rank device set: every rank uses GPU 0"
    severity = "error"
    why = (
        '`"cuda"`, `.cuda()` and `torch.device("cuda")` mean *the current device*, which is GPU 0 '
        'in every process until `torch.cuda.set_device(local_rank)` is called; `"cuda:0"` is '
        "GPU 0 outright. So all ranks put their model and batches on the first GPU: it runs out "
        'of memory or NCCL stops with "Duplicate GPU detected" (NVIDIA/Megatron-LM#661), and '
        "the other GPUs idle. The DDP docstring asks each process to own one GPU through "
        "CUDA_VISIBLE_DEVICES or `torch.cuda.set_device(i)`, and pytorch/examples PR #1142 added "
        "exactly those calls: call `torch.cuda.set_device(local_rank)` right after "
        "`init_process_group`. Not flagged: scripts that call `torch.cuda.set_device(...)`, enter "
        "`torch.cuda.device(...)`, set CUDA_VISIBLE_DEVICES in code, call a project helper such as "
        "`init_distributed_mode` or `<distributed module>.init()`, use ddpify.runtime, or do not "
        "create the process group themselves (the code that does sets the device, as EDM's "
        "`torch_utils.distributed.init()`); and devices computed from a rank (`.cuda(local_rank)`, "
        '`f"cuda:{local_rank}"`).'
    )
    fix = None
    fix_notes = (
        "No automatic fix: which expression holds the local rank (an argument, LOCAL_RANK, the "
        "spawn index) depends on how the script is launched, and moving some tensors but not "
        "others would put them on different GPUs."
    )
    false_positives = "A device set by code of another module that this file calls under another name."
    valid = (
        """\
import os
import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = model.cuda()
""",
        """\
import torch
import ddpify.runtime as ddpify

device = torch.device(ddpify.device() if torch.cuda.is_available() else "cpu")
model = model.to(device)
""",
        """\
import torch
import torch.distributed as dist

model = model.cuda(local_rank)
batch = batch.to(f"cuda:{local_rank}")
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def training_loop(device=torch.device("cuda")):  # the caller's setup already set this rank's GPU
    net = DDP(build_net().to(device), device_ids=[device])
    for batch in loader:
        net(batch.to(device)).sum().backward()
""",
        """\
import distsetup
import torch
import torch.distributed as dist


def main():
    distsetup.init()  # a project helper: init_process_group + torch.cuda.set_device(LOCAL_RANK)
    model = torch.nn.parallel.DistributedDataParallel(build_model().cuda())
""",
        """\
import os
import torch
import torch.distributed as dist

distributed = False  # set to True to launch with torchrun
if distributed:
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = model.cuda(local_rank)
else:
    model = model.cuda()  # one process: GPU 0 is its own
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = DDP(model.cuda())
for x, y in loader:
    x, y = x.cuda(non_blocking=True), y.to("cuda:0")
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
device = "cuda:0"
buffer = torch.zeros(4, device="cuda")
"""
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._active = False

    def visit_Module(self, node: cst.Module) -> None:
        self._active = (
            is_data_parallel(self, node)
            and not self.file.already_converted
            and not pins_device_per_rank(self, node)
            and self._creates_process_group(node)
        )

    def _creates_process_group(self, node: cst.Module) -> bool:
        """The file creates the process group itself (``init_process_group``, or spawns the
        workers that will): otherwise another file sets the group up, and with it the device, so
        a bare "cuda" here is that device (EDM's ``training_loop(device=torch.device("cuda"))``)."""
        if self.file.analysis.source.spawned:
            return True
        return any(
            self.qualified(call) & INIT_PROCESS_GROUP for call in self.file.analysis.source.calls_by_callee.get("init_process_group", [])
        )

    # ------------------------------------------------------------ calls
    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        qualified = self.qualified(node)
        if qualified & names.TORCH_DEVICE:
            self._torch_device(node)
            return
        func = node.func
        if isinstance(func, cst.Attribute) and not self._is_module(func.value):
            method = func.attr.value
            if method == "cuda":
                self._cuda(node)
                return
            if (
                method == "to"
                and node.args
                and node.args[0].keyword is None
                and not node.args[0].star
                and not _has_call(node.args[0].value)
            ):
                value = self._value(node.args[0].value, allow_int=True)
                if value is not node.args[0].value:
                    self.report(
                        node,
                        message=f".to({short(node.args[0].value)}) with no per-rank device set: every rank uses GPU 0",
                        replacement=node.with_changes(args=[node.args[0].with_changes(value=value), *node.args[1:]]),
                    )
                    return
        self._device_keyword(node)

    def _torch_device(self, node: cst.Call) -> None:
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        original = node.args[0].value
        value = self._value(original, allow_int=True)
        if value is original:
            return
        replacement = (
            rewrites.device()
            if rewrites.is_cuda_literal(original, allow_int=True)
            else node.with_changes(args=[node.args[0].with_changes(value=value)])
        )
        self.report(node, message=f"{short(node)} with no per-rank device set: every rank uses GPU 0", replacement=replacement)

    def _cuda(self, node: cst.Call) -> None:
        if any(a.star for a in node.args):
            return
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value == "device":
                if not rewrites.is_cuda_literal(arg.value, allow_int=True):
                    return  # .cuda(local_rank): a per-rank device already
        self.report(
            node,
            message=f"{short(node)} with no per-rank device set: every rank uses GPU 0",
            replacement=functools.partial(rewrites.cuda_to_device, node),
        )

    def _device_keyword(self, node: cst.Call) -> None:
        args = list(node.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "device":
                if _has_call(arg.value):
                    return  # device=torch.device("cuda"): judged at that call
                value = self._value(arg.value, allow_int=False)
                if value is not arg.value:
                    args[index] = arg.with_changes(value=value)
                    self.report(
                        node,
                        message=f"device={short(arg.value)} with no per-rank device set: every rank uses GPU 0",
                        replacement=node.with_changes(args=args),
                    )
                return

    # ------------------------------------------------------------ assignments
    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._active or len(node.targets) != 1 or _has_call(node.value):
            return  # values with calls are judged at the call (torch.device("cuda"))
        target = node.targets[0].target
        name = target.attr.value if isinstance(target, cst.Attribute) else target.value if isinstance(target, cst.Name) else ""
        if not names.DEVICE_VARIABLE.match(name):
            return
        value = self._value(node.value, allow_int=True)
        if value is not node.value:
            self.report(
                node.value,
                message=f"{short(target)} = {short(node.value)} with no per-rank device set: every rank uses GPU 0",
                replacement=value,
            )

    # ------------------------------------------------------------ helpers
    def report(self, node: cst.CSTNode, *args: Any, **kwargs: Any) -> None:
        """Only where a distributed run executes ``node``: the single-process branch of ``if
        distributed: ... else: model.cuda()`` (yolov4) has GPU 0 to itself."""
        if self.file.analysis.context.ranks(node).may & DISTRIBUTED:
            super().report(node, *args, **kwargs)

    def _value(self, value: cst.BaseExpression, *, allow_int: bool) -> cst.BaseExpression:
        return rewrites.device_value(value, allow_int=allow_int, is_torch_device=self._is_torch_device)

    def _is_torch_device(self, call: cst.Call) -> bool:
        return bool(self.qualified(call) & names.TORCH_DEVICE)

    def _is_module(self, node: cst.BaseExpression) -> bool:
        """``torch.cuda``: a module, whose ``.cuda``/``.to`` are not tensor methods."""
        return is_simple_reference(node) and any(q == "torch" or q.startswith("torch.") for q in self.qualified(node))


def _has_call(node: cst.CSTNode) -> bool:
    return bool(of_types(node, cst.Call))
