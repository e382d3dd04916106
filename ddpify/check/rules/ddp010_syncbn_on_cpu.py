from __future__ import annotations

import re

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import SYNC_BATCHNORM, cpu_only, gloo_backend
from ddpify.tree.cstutil import code

_CUDA_TEST = re.compile(r"cuda|nccl|gpu", re.I)


class SyncBatchNormOnCpu(Rule):
    code = "DDP010"
    opt_in = (
        "It needs the run's backend and device, which scripts mostly choose at run time (a flag, "
        "`torch.cuda.is_available()`), and the mistake raises at the first forward pass anyway: a linter adds "
        "little."
    )
    name = "syncbn-on-cpu"
    message = "SyncBatchNorm in a gloo/CPU run: SyncBatchNorm only works on CUDA and the forward pass raises"
    severity = "error"
    why = (
        "SyncBatchNorm all-reduces its statistics with a CUDA-only kernel path: on CPU tensors (the "
        'gloo backend) its forward raises "SyncBatchNorm expected input tensor to be on GPU" '
        "(open-mmlab/mmocr#398), and DDP refuses to wrap a CPU module that holds one. Scripts that "
        'run with `init_process_group(backend="gloo")`, or never mention CUDA at all, therefore '
        "crash on the first batch after `convert_sync_batchnorm`. Convert only where the model is "
        'on CUDA (`if device.type == "cuda": model = nn.SyncBatchNorm.convert_sync_batchnorm(model)`), '
        "or use `ddpify.prepare_model(model)`, which converts for CUDA models only. A conversion "
        "already under a test that mentions cuda/nccl/gpu is not flagged. Report only."
    )
    fix = None
    fix_notes = "No automatic fix: where the model's device is decided is the script's choice."
    false_positives = "None known."
    valid = (
        """\
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("nccl")
model = nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda()
""",
        """\
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group(backend="gloo")
if device.type == "cuda":
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
""",
        """\
import torch.nn as nn
import ddpify.runtime as ddpify

model = ddpify.prepare_model(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)))
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group(backend="gloo")
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
net = nn.Sequential(nn.Linear(8, 8), nn.SyncBatchNorm(8))
net = DDP(net)
"""
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._reason: str | None = None

    def visit_Module(self, node: cst.Module) -> None:
        if "SyncBatchNorm" not in self.file.source:
            return
        gloo = gloo_backend(self, node)
        if gloo is not None:
            self._reason = f"the process group uses gloo (`{code(gloo)}`)"
        elif cpu_only(self.file.source):
            self._reason = "this script never uses CUDA"

    def visit_Call(self, node: cst.Call) -> None:
        if self._reason is None or not any(SYNC_BATCHNORM.match(q) for q in self.qualified(node)):
            return
        if self._cuda_guarded(node):
            return
        self.report(node, message=f"SyncBatchNorm on CPU: {self._reason}, and SyncBatchNorm only works on CUDA tensors")

    def _cuda_guarded(self, node: cst.CSTNode) -> bool:
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test and _CUDA_TEST.search(code(ancestor.test)):
                return True
            child = ancestor
        return False
