from __future__ import annotations

import libcst as cst

from ddpify.analysis.ranks import DISTRIBUTED
from ddpify.check.calls import nodes
from ddpify.check.metric_loops import accumulators, reduces_through, trains, unreduced_here
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import has_reduction
from ddpify.tree.cstutil import code, of_types


class UnreducedEvalMetrics(Rule):
    code = "DDP014"
    default = True
    name = "unreduced-eval-metrics"
    message = (
        "evaluation loop over a DistributedSampler-sharded loader accumulates metrics, and nothing in "
        "the script reduces them across ranks: every rank reports the score of its own shard"
    )
    severity = "warning"
    why = (
        "A DistributedSampler gives each rank 1/N of the evaluation set, so `correct / total` computed "
        "in the loop is the accuracy of one shard; rank 0 prints and acts on it (best checkpoint, early "
        "stopping) as if it were the whole set, and every rank may decide differently. Sum the counts "
        "across ranks before dividing (`dist.all_reduce` of a `[correct, total]` tensor, as "
        "pytorch/examples imagenet/main.py's `AverageMeter.all_reduce` and Horovod's `metric_average` "
        "do) and never average per-rank means; or evaluate the full set on every rank, unsharded, as "
        "ddpify's converter does. The rule looks for a loop over a loader whose sampler is a "
        "DistributedSampler (or a `ddpify.distributed_loader`), directly or through a function "
        "parameter (also a parameter that a project file importing this one hands such a loader: "
        "an engine's `evaluate(model, loader)` called by train.py with its sharded validation loader, where neither "
        "the function nor that caller reduces anything), with no backward/step inside (also none through a function of this file, a "
        "function of the project's modules, or a method of a project class the loop's object was "
        "made from: `trainer.do_pass(batch)` whose class steps the optimizer is a training loop) and `+=` into correct/total/loss-like names, in a file "
        "that calls no all_reduce/reduce/all_gather/gather; or, in a file that reduces other values "
        "(the training loss), in a function where neither it, the functions it calls nor its callers "
        "reduce anything. A loop that only a single-process run reaches (its callers stop a "
        "distributed run first: `if args.distributed: raise NotImplementedError()`) sees the whole set."
    )
    fix_notes = "No automatic fix: where to reduce is a decision."
    false_positives = "Metrics reduced by a helper of another module whose name does not say so; evaluation code that only the main process runs on purpose."
    valid = (
        """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
correct = total = 0
for x, y in val_loader:
    correct += (model(x).argmax(1) == y).sum().item()
    total += y.numel()
counts = torch.tensor([correct, total], dtype=torch.float64)
dist.all_reduce(counts)
accuracy = (counts[0] / counts[1]).item()
""",
        """\
import torch
import ddpify.runtime as ddpify
from torch.utils.data import DataLoader


def accuracy(model, loader):
    hits = total = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (model(x).argmax(dim=1) == y).sum().item()
            total += y.numel()
    return hits / total


train_loader = ddpify.distributed_loader(train_set, batch_size=32, shuffle=True)
val_loader = DataLoader(val_set, batch_size=64, shuffle=False)  # every rank evaluates the full set
ddpify.print(f"val acc {accuracy(model, val_loader):.3f}")
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_loader = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
total_loss = 0.0
for x, y in train_loader:  # a training loop: its loss is this rank's running loss
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.item()
""",
        """\
import torch
from torch.utils.data import DataLoader, DistributedSampler


def test_net(args):
    sampler = DistributedSampler(test_set) if args.distributed else None
    loader = DataLoader(test_set, batch_size=1, sampler=sampler)
    if args.distributed:
        raise NotImplementedError()  # testing runs as one process: test() sees the whole set
    test(model, loader)


def test(model, loader):
    hits = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (model(x).argmax(1) == y).sum().item()
    print(f"test accuracy {hits / len(loader.dataset):.3f}")
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        dist.all_reduce(loss.detach())  # the training loss is reduced...


def validate(model, loader):
    val_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            val_loss += criterion(model(x), y).item()
    return val_loss / len(loader)  # ...this shard's validation loss is not


val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
for epoch in range(10):
    train_one_epoch(model, train_loader, optimizer)
    loss = validate(model, val_loader)
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: val loss {loss:.3f}")
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def evaluate(model, loader):
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images).argmax(1) == labels).sum().item()
            total += labels.size(0)
    return correct / total


val_sampler = DistributedSampler(val_set, shuffle=False)
val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)
if dist.get_rank() == 0:
    print("val acc", evaluate(model, val_loader))
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

test_loader = DataLoader(test_set, batch_size=64, sampler=DistributedSampler(test_set))
test_loss = 0.0
for x, y in test_loader:
    test_loss += criterion(model(x), y).item()
print(test_loss / len(test_loader))
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        samplers = self.file.analysis.samplers
        sharded, parameters = set(samplers.loaders), samplers.sharded_parameters
        reduces: bool | None = None  # asked once, when a loop needs it
        for loop in nodes(node, cst.For):
            loader = self._sharded_iterable(loop, sharded, parameters)
            if loader is None:
                self._check_handed_in(loop)
                continue
            if not self._is_metric_loop(loop) or not self.file.analysis.context.ranks(loop).may & DISTRIBUTED:
                continue  # not metrics; or single-process code (``if args.distributed: raise`` above its caller)
            if reduces is None:
                reduces = has_reduction(self, node)
            if not reduces:
                self.report(
                    loop,
                    f"evaluation loop over {loader} accumulates metrics of this rank's shard only, and nothing in "
                    "the script reduces them across ranks: sum the counts with dist.all_reduce before dividing",
                )
            elif unreduced_here(self, loop):
                self.report(
                    loop,
                    f"evaluation loop over {loader} accumulates metrics of this rank's shard only: the script reduces "
                    "other values, but neither this function nor its callers reduce these; sum them with "
                    "dist.all_reduce before they are printed or compared",
                )

    def _check_handed_in(self, loop: cst.For) -> None:
        """A loop over a parameter that a project file importing this one hands a sharded
        loader (an engine's ``evaluate(model, loader)`` that train.py calls with its
        DistributedSampler-sharded validation loader), where neither the function, what it
        calls, nor that caller reduces anything."""
        source = self.file.analysis.source
        function = source.enclosing_function(loop)
        if function is None or source.call_sites(function):
            return  # this file calls it: the loaders are this file's
        params = [*function.params.posonly_params, *function.params.params]
        bound = 1 if source.is_method(function) else 0
        mentioned = {code(n) for n in of_types(loop.iter, cst.Name)}
        for index, param in enumerate(params[bound:]):
            if param.name.value not in mentioned or not self._is_metric_loop(loop):
                continue
            handed = source.project.sharded_elsewhere(function.name.value, param.name.value, index, method=bool(bound))
            if handed and not all(handed) and not reduces_through(self, function):
                self.report(
                    loop,
                    f"evaluation loop over {param.name.value} (a DistributedSampler-sharded loader where "
                    f"{function.name.value}() is called in another file) accumulates metrics of this rank's shard "
                    "only, and neither this function nor that caller reduces them: sum the counts with "
                    "dist.all_reduce before dividing",
                )
                return

    def _sharded_iterable(self, loop: cst.For, sharded: set[str], parameters: frozenset[tuple[cst.FunctionDef, str]]) -> str | None:
        mentioned = {code(n) for n in of_types(loop.iter, cst.Name, cst.Attribute)}
        for key in sorted(mentioned & sharded):
            return key
        function = next((a for a in self.ancestors(loop) if isinstance(a, cst.FunctionDef)), None)
        if function is not None:
            for owner, parameter in parameters:
                if owner is function and parameter in mentioned:
                    return f"{parameter} (a sharded loader where {function.name.value}() is called)"
        return None

    def _is_metric_loop(self, loop: cst.For) -> bool:
        return bool(accumulators(self, loop)) and not trains(self, loop)
