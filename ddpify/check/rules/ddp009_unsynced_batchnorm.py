from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import BATCHNORM, TORCHVISION_MODEL, TORCHVISION_WITHOUT_BN, cpu_only, gloo_backend
from ddpify.check.wraps import is_ddp_class_call
from ddpify.tree.cstutil import of_types


class UnsyncedBatchNorm(Rule):
    code = "DDP009"
    default = True
    name = "unsynced-batchnorm"
    message = "model with BatchNorm wrapped in DDP without SyncBatchNorm: each rank normalises with its own small batch"
    severity = "note"
    why = (
        "DDP synchronises gradients, not BatchNorm statistics: every rank normalises with the mean "
        "and variance of its own per-GPU batch and keeps its own running averages (only rank 0's "
        "are saved). With small per-GPU batches the statistics get noisy and accuracy drops; "
        "ultralytics/yolov5#401 measured SyncBatchNorm helping at 8 images per GPU or fewer "
        "(pytorch/pytorch#2584). Convert before wrapping: "
        "`model = nn.SyncBatchNorm.convert_sync_batchnorm(model)` on CUDA (DDP rejects SyncBatchNorm "
        "on CPU/gloo, see DDP010), or use `ddpify.prepare_model(model)`, which does exactly that. "
        "This is a note, not an error: with large per-GPU batches plain BatchNorm is fine and "
        "faster (no extra all-reduce per layer), so decide, then silence it with `# noqa: DDP009`. "
        "Triggers when the file builds nn.BatchNorm1d/2d/3d or a torchvision model that has "
        "BatchNorm and wraps with DistributedDataParallel, with no SyncBatchNorm anywhere. Report only."
    )
    fix = None
    fix_notes = "No automatic fix: whether per-GPU statistics are good enough depends on the per-GPU batch size."
    false_positives = (
        "BatchNorm kept per GPU on purpose (linear probing with a BatchNorm head, large per-GPU batches): noise rather than a bug."
    )
    valid = (
        """\
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU()).cuda()
net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
net = DDP(net, device_ids=[local_rank])
""",
        """\
import torch.nn as nn
import ddpify.runtime as ddpify

net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
net = ddpify.prepare_model(net)
""",
        """\
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

net = torchvision.models.vit_b_16().cuda()  # LayerNorm only
net = DDP(net, device_ids=[local_rank])
""",
    )
    invalid = (
        Invalid(
            """\
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU()).cuda()
net = DDP(net, device_ids=[local_rank])
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torchvision.models import resnet50

model = DistributedDataParallel(resnet50().cuda(), device_ids=[local_rank])
"""
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._batchnorm = False

    def visit_Module(self, node: cst.Module) -> None:
        source = self.file.source
        if "SyncBatchNorm" in source or "convert_sync_batchnorm" in source or "convert_syncbn_model" in source:
            return
        if cpu_only(source) or gloo_backend(self, node) is not None:
            return  # SyncBatchNorm is not an option there (DDP010)
        self._batchnorm = any(self._is_batchnorm(n) for n in of_types(node, cst.Name, cst.Attribute, cst.Call))

    def _is_batchnorm(self, node: cst.CSTNode) -> bool:
        for name in self.qualified(node):
            if BATCHNORM.match(name):
                return True
            if isinstance(node, cst.Call):
                found = TORCHVISION_MODEL.match(name)
                if found and not TORCHVISION_WITHOUT_BN.match(found.group(2)):
                    return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self._batchnorm and is_ddp_class_call(self, node):
            self.report(node)
