from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites
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
        "the loop, exactly as the converter does, for the loader the loop iterates (directly, through "
        "`enumerate`/`tqdm`, or through a function of this file it hands the loader to). An epoch loop "
        "is `for epoch in ...` or a `range(...)` whose bound counts epochs (`for t in range(args.epochs)`)."
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
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)


def train(epoch):
    train_sampler.set_epoch(epoch)  # in the function the epoch loop calls
    for batch in train_loader:
        step(batch)


for epoch in range(10):
    train(epoch)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
val_loader = DataLoader(val_set, batch_size=8)
for epoch in range(3):  # a second phase on the unsharded loader only
    for batch in val_loader:
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
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
for t in range(args.epochs):  # the range bound counts epochs, whatever the variable's name
    for batch in loader:
        step(batch)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
import ddpify.runtime as ddpify

loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
for t in range(args.epochs):  # the range bound counts epochs, whatever the variable's name
    ddpify.set_epoch(loader, t)
    for batch in loader:
        step(batch)
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(probe_set, sampler=DistributedSampler(probe_set))
train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set))


def train_one_epoch(model, data):
    for x, y in data:
        step(model, x, y)


for epoch in range(10):
    train_one_epoch(model, train_loader)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
import ddpify.runtime as ddpify

loader = DataLoader(probe_set, sampler=DistributedSampler(probe_set))
train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set))


def train_one_epoch(model, data):
    for x, y in data:
        step(model, x, y)


for epoch in range(10):
    ddpify.set_epoch(train_loader, epoch)
    train_one_epoch(model, train_loader)
""",
        ),
    )

    def __init__(self, file) -> None:  # type: ignore[no-untyped-def]
        super().__init__(file)
        self._loaders: list[str] = []  # variables holding a loader with a DistributedSampler
        self._plain: set[str] = set()  # variables holding a loader without one
        self._samplers: set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        """The samplers and loaders of the whole file first: an epoch loop may come before the
        code that builds its loader (a ``train()`` defined above ``main()``)."""
        built = [a for a in of_types(node, cst.Assign) if isinstance(a, cst.Assign) and isinstance(a.value, cst.Call)]
        built = [a for a in built if len(a.targets) == 1 and is_simple_reference(a.targets[0].target)]
        for assign in built:
            if self.qualified(assign.value) & _SAMPLER:
                self._samplers.add(code(assign.targets[0].target))
        for assign in built:
            target, call = code(assign.targets[0].target), assign.value
            assert isinstance(call, cst.Call)
            if self._has_distributed_sampler(call):
                self._loaders.append(target)
            elif self.qualified(call) & names.DATALOADER:
                self._plain.add(target)

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
        loops = self.file.analysis.loops
        if not self._loaders and not self._samplers or not loops.is_epoch_loop(original_node):
            return
        bodies = [original_node.body, *(f.body for f in loops.called_functions(original_node))]
        if any(is_method_call(call, "set_epoch") for body in bodies for call in of_types(body, cst.Call)):
            return  # here, or in a function of this file the loop calls (train(epoch))
        iterated = loops.iterated(original_node)
        chosen = [key for key in iterated if key in self._loaders]
        if not chosen:
            chosen = [key for key in loops.handed_out(original_node) if key in self._loaders]
        if not chosen and any(key in self._plain for key in iterated):
            return  # it iterates a loader without a DistributedSampler
        if chosen and isinstance(original_node.body, cst.IndentedBlock):
            self.report(original_node, replacement=functools.partial(rewrites.with_set_epoch, original_node, chosen))
        else:
            self.report(original_node)  # which loader it reads is not visible here
