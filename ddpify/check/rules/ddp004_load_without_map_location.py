from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites


class LoadWithoutMapLocation(Rule):
    code = "DDP004"
    name = "load-without-map-location"
    message = "torch.load without map_location: tensors saved from cuda:0 land on GPU 0 in every process"
    why = (
        "A checkpoint remembers the device its tensors were saved from. Loaded without "
        "`map_location`, every rank puts them on cuda:0, so GPU 0 fills up with N copies and may run "
        "out of memory (pytorch/examples#969). The fix adds `map_location=ddpify.device()`, the "
        "process's own device, as the converter does."
    )
    fix = "safe"
    valid = (
        """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt", map_location="cpu")
""",
        """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt", {"cuda:0": "cuda:1"})
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt")
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

state = torch.load("ckpt.pt", map_location=ddpify.device())
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualified(node) & names.TORCH_LOAD:
            fixed = rewrites.with_map_location(node)
            if fixed is not None:
                self.report(node, replacement=fixed)
