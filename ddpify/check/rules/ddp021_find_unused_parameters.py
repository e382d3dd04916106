from __future__ import annotations

import libcst as cst

from ddpify.analysis.optional_inputs import sometimes_none_input
from ddpify.check.calls import is_true
from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import is_ddp_wrap


class FindUnusedParameters(Rule):
    code = "DDP021"
    opt_in = (
        "The flag is required by models that really skip parameters in some forward passes, which only a run "
        "shows: a note about cost, not a mistake."
    )
    name = "find-unused-parameters"
    message = (
        "find_unused_parameters=True makes DDP traverse the autograd graph after every forward: "
        "drop it unless some parameters really get no gradient, or consider static_graph=True"
    )
    severity = "note"
    why = (
        "With `find_unused_parameters=True`, DDP walks the autograd graph from the outputs after "
        "each forward to mark parameters that will get no gradient, so their buckets can be "
        "reduced anyway. That costs a graph traversal every iteration and prevents some "
        "communication overlap; when every parameter is used, PyTorch itself warns that the flag "
        "is unnecessary (cszn/KAIR#103). It is needed only when some parameters are really skipped "
        "in a forward (otherwise: 'Expected to have finished reduction in the prior iteration', "
        "pytorch/pytorch#43259). If the set of used parameters does not change between iterations, "
        "`static_graph=True` gives the same safety after the first iteration without the per-step "
        "cost. Information only: whether parameters go unused is a property of the model. Not reported "
        "where the model's class registers submodules its forward never uses, or its optimizer gets only "
        "some of its parts: there the flag is needed (the converter adds it)."
    )
    fix_notes = "No automatic fix: whether parameters go unused is a property of the model."
    false_positives = "Models that really skip parameters in some forwards (the flag is then required)."
    valid = (
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank])
""",
        """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model, static_graph=True)
gan = ddpify.prepare_model(gan, find_unused_parameters=args.unused)
""",
        """\
import torch
import torch.nn as nn
import ddpify.runtime as ddpify

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)
        self.aux = nn.Linear(4, 2)  # never used by forward: the flag is needed

    def forward(self, x):
        return self.head(x)

model = ddpify.prepare_model(Net(), find_unused_parameters=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
        """\
import random
import torch
import ddpify.runtime as ddpify
from conditioned import UNet

model = ddpify.prepare_model(UNet(), find_unused_parameters=True)
optimizer = torch.optim.Adam(model.parameters())
for images, labels in loader:
    if random.random() < 0.1:
        labels = None  # classifier-free guidance: the label embedding gets no gradient now
    loss = model(images, labels).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank], find_unused_parameters=True)
"""
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not is_ddp_wrap(self, node):
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "find_unused_parameters" and is_true(arg.value):
                if not self._needed(node):
                    self.report(arg)

    def _needed(self, wrap: cst.Call) -> bool:
        """The wrapped model registers submodules its forward never uses, or its optimizer
        gets only some of its parts, or a forward input is set to None on some steps
        (``ddpify.analysis.models``): the flag is what keeps DDP
        from stopping at the second iteration (the converter adds it there)."""
        if not wrap.args:
            return False
        models = self.file.facts.analysis.models
        model = models.model_of(wrap.args[0].value)
        return model is not None and bool(
            model.possibly_unused or model.parts or sometimes_none_input(models.dataflow, {model.key, *model.references})
        )
