from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.helpers import is_epoch_loop
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import rewrites
from ddpify.tree.cstutil import code, is_method_call, is_simple_reference, of_types

_SAMPLER = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})


class MissingSetEpoch(Rule):
    code = "DDP001"
    name = "missing-set-epoch"
    message = "epoch loop never calls set_epoch on its DistributedSampler: every epoch repeats the same order"
    severity = "error"
    why = (
        "DistributedSampler shuffles with a seed derived from its epoch. Without "
        "`sampler.set_epoch(epoch)` (or `ddpify.set_epoch(loader, epoch)`) before each epoch, every "
        "epoch replays the permutation of epoch 0, which quietly hurts convergence "
        "(pytorch/pytorch#31771). The fix inserts `ddpify.set_epoch(loader, epoch)` at the top of "
        "the loop, exactly as the converter does."
    )
    fix = "safe"
    valid = (
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=8, sampler=sampler)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for batch in loader:
        step(batch)
""",
        """\
import ddpify.runtime as ddpify

loader = ddpify.distributed_loader(dataset, batch_size=8, shuffle=True)
for epoch in range(10):  # the runtime's loader advances its own epoch
    for batch in loader:
        step(batch)
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
for epoch in range(10):
    for batch in loader:
        step(batch)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
import ddpify.runtime as ddpify

loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
for epoch in range(10):
    ddpify.set_epoch(loader, epoch)
    for batch in loader:
        step(batch)
""",
        ),
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._loaders: list[str] = []  # variables holding a loader with a DistributedSampler
        self._samplers: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not is_simple_reference(node.targets[0].target):
            return
        target = code(node.targets[0].target)
        if isinstance(node.value, cst.Call) and self.qualified(node.value) & _SAMPLER:
            self._samplers.add(target)
        elif isinstance(node.value, cst.Call) and self._has_distributed_sampler(node.value):
            self._loaders.append(target)

    def _has_distributed_sampler(self, call: cst.Call) -> bool:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "sampler":
                value = arg.value
                if isinstance(value, cst.Call) and self.qualified(value) & _SAMPLER:
                    return True
                if code(value) in self._samplers:
                    return True
        return False

    def leave_For(self, original_node: cst.For) -> None:
        if not self._loaders and not self._samplers or not is_epoch_loop(original_node):
            return
        if any(is_method_call(call, "set_epoch") for call in of_types(original_node.body, cst.Call)):
            return
        if isinstance(original_node.body, cst.IndentedBlock) and self._loaders:
            self.report(original_node, replacement=functools.partial(rewrites.with_set_epoch, original_node, [self._pick(original_node)]))
        else:
            self.report(original_node)

    def _pick(self, loop: cst.For) -> str:
        text = code(loop.body)
        mentioned: str | None = next((key for key in self._loaders if key in text), None)
        return mentioned or self._loaders[0]
