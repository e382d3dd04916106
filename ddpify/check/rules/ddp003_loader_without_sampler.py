from __future__ import annotations

import functools

import libcst as cst

from ddpify.analysis.ranks import Branch
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import is_data_parallel, is_iterable_dataset, iterable_dataset_classes
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import of_types

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, ...): positions 3 and 4.
_SAMPLER_POSITION = 3


class LoaderWithoutSampler(Rule):
    code = "DDP003"
    default = True
    name = "loader-without-sampler"
    message = "training DataLoader has no distributed sampler: every rank iterates the whole dataset"
    severity = "error"
    why = (
        'DDP averages gradients but does not split the data: the DDP docstring says it "does not '
        'chunk or otherwise shard the input", that is the job of a DistributedSampler. A training '
        "loader without one hands every rank the same batches, so N GPUs do the work of one, each "
        "epoch takes as long as on a single GPU, and the effective batch is N copies of the same "
        "samples. Which loaders train is decided as the converter decides it, by where their batches "
        "go (``ddpify.analysis.dataflow``: a loop whose batch reaches backward() trains; one under "
        "no_grad/inference_mode or after eval() evaluates, and ddpify deliberately leaves those "
        "unsharded so metrics are exact on every rank; names and shuffle= decide nothing). Loaders "
        "with their own sampler= or batch_sampler=, IterableDatasets, datasets split per rank upstream "
        "(`datasets.distributed.split_dataset_by_node`, also inside a dataset built around it), and the loader of the "
        "single-process branch (the other branch builds one with a sampler) are not flagged."
    )
    fix = "unsafe"
    fix_notes = "No fix in a hand-written script: a DistributedSampler needs a process group, which a single-process run does not have. In a script that already uses ddpify.runtime the unsafe fix writes `ddpify.distributed_loader(..., per_process_batch=True)` (the sampler added at run time, the batch size kept per process)."
    false_positives = "A loader that only a single-process branch the analysis cannot read builds (a configuration flag), or one whose sampler is set later (`loader.sampler = ...`)."
    valid = (
        """\
import torch
import torch.distributed as dist
from datasets.distributed import split_dataset_by_node
from torch.utils.data import DataLoader

rank, world_size = dist.get_rank(), dist.get_world_size()
stream = split_dataset_by_node(raw_stream, rank=rank, world_size=world_size)
loader = DataLoader(Tokenized(stream, tokenizer), batch_size=None)
model = torch.nn.parallel.DistributedDataParallel(net)
for batch in loader:
    model(batch).sum().backward()
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
val_loader = DataLoader(val_set, batch_size=64)
""",
        """\
import ddpify.runtime as ddpify
from torch.utils.data import DataLoader

train_loader = ddpify.distributed_loader(train_set, batch_size=32, shuffle=True)
test_loader = DataLoader(test_set, batch_size=64, shuffle=False)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset


class Stream(IterableDataset):
    def __iter__(self):
        yield from range(dist.get_rank(), 100, dist.get_world_size())


train_loader = DataLoader(Stream(), batch_size=8)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

if opt["dist"]:
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)
else:
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)  # the single-process run
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

dist.init_process_group("nccl")
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
model = DDP(model)
for x, y in train_loader:
    loss_fn(model(x), y).backward()
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
import ddpify.runtime as ddpify

dist.init_process_group("nccl")
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
model = DDP(model)
for x, y in train_loader:
    loss_fn(model(x), y).backward()
""",
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
import ddpify.runtime as ddpify

dist.init_process_group("nccl")
train_loader = ddpify.distributed_loader(train_set, batch_size=32, shuffle=True, per_process_batch=True)
model = DDP(model)
for x, y in train_loader:
    loss_fn(model(x), y).backward()
""",
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._classes: set[str] = set()
        self._values: dict[str, list[cst.BaseExpression]] = {}
        self._active = False

    def visit_Module(self, node: cst.Module) -> None:
        self._active = is_data_parallel(self, node)
        self._classes = iterable_dataset_classes(self, node)
        assigned = self.file.analysis.source.assignments
        self._values = {target: [v for _, v in found if v is not None] for target, found in assigned.items()}

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        fact = self.file.facts.loaders.get(node)
        if fact is None or fact.role != "train" or self._has_sampler(node):
            return
        if self.file.analysis.context.branch(node) is Branch.SINGLE_PROCESS or self._alternative(node):
            return  # the loader of the run without a process group
        dataset = _dataset(node)
        if dataset is not None and is_iterable_dataset(self, dataset, self._classes, self._values):
            return
        label = fact.key or "DataLoader"
        self.report(
            node,
            message=f"training loader {label} ({fact.reason}) has no distributed sampler: every rank iterates the whole dataset",
            replacement=functools.partial(rewrites.distributed_loader, node, per_process_batch=True)
            if self.file.already_converted
            else None,
        )

    def _alternative(self, node: cst.Call) -> bool:
        """The other branch of an ``if`` around this loader builds one with a sampler: this is
        the single-process alternative (``if opt["dist"]: ... sampler=... else: DataLoader(...)``)."""
        child: cst.CSTNode = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return False
            if isinstance(ancestor, cst.If):
                other = ancestor.orelse if child is ancestor.body else ancestor.body if child is ancestor.orelse else None
                if other is not None and any(
                    self.qualified(c) & names.DATALOADER and self._has_sampler(c) for c in of_types(other, cst.Call)
                ):
                    return True
            child = ancestor
        return False

    def _has_sampler(self, call: cst.Call) -> bool:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) > _SAMPLER_POSITION:
            return True
        if rewrites.has_keyword(call, "sampler") or rewrites.has_keyword(call, "batch_sampler"):
            return True
        # DataLoader(ds, **kwargs): the dict may carry a sampler; only judge when none is in sight.
        return any(a.star for a in call.args) and "sampler" in self.file.source


def _dataset(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dataset":
            return arg.value
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    return None
