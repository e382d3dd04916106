from __future__ import annotations

import re

import libcst as cst

from ddpify.analysis.ranks import DISTRIBUTED
from ddpify.check.calls import dist_function, nodes
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import REDUCTION_HELPER, REDUCTIONS, has_reduction
from ddpify.tree.cstutil import callee_name, code, is_method_call, is_simple_reference, of_types

# Accumulators of an evaluation: `correct += ...`, `total += ...`, `val_loss += ...`.
METRIC = re.compile(r"correct|total|loss|acc|hit|count|err|samples|metric|score|^n_|^num_|_sum$|^sum_", re.I)
METER = re.compile(r"meter|loss|acc|top\d|metric|score|err", re.I)
_TRAINING_CALLS = frozenset({"backward", "step", "zero_grad"})


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

    def __init__(self, file) -> None:
        super().__init__(file)
        self._training_functions: set[str] = set()  # functions of the file that call backward/step

    def visit_Module(self, node: cst.Module) -> None:
        samplers = self.file.analysis.samplers
        sharded, parameters = set(samplers.loaders), samplers.sharded_parameters
        reduces: bool | None = None  # asked once, when a loop needs it
        self._training_functions = {
            f.name.value for f in nodes(node, cst.FunctionDef) if any(is_method_call(c, *_TRAINING_CALLS) for c in of_types(f, cst.Call))
        }
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
            elif self._unreduced_here(loop):
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
            if handed and not all(handed) and not any(self._reduces(f) for f in self._callees(function)):
                self.report(
                    loop,
                    f"evaluation loop over {param.name.value} (a DistributedSampler-sharded loader where "
                    f"{function.name.value}() is called in another file) accumulates metrics of this rank's shard "
                    "only, and neither this function nor that caller reduces them: sum the counts with "
                    "dist.all_reduce before dividing",
                )
                return

    def _unreduced_here(self, loop: cst.For) -> bool:
        """The loop's function, the functions it calls and the functions that call it reduce
        nothing (the file's reductions are elsewhere: the training loss, a helper's barrier)."""
        source = self.file.analysis.source
        function = source.enclosing_function(loop)
        if function is None:
            return False  # module-level: the file's reductions may well be these
        related = self._callees(function)
        for site in self.file.analysis.context.call_sites(function):
            caller = source.enclosing_function(site)
            if caller is None:
                if self._module_level_reduces():
                    return False
                continue
            related.add(caller)
        return not any(self._reduces(f) for f in related)

    def _module_level_reduces(self) -> bool:
        """Module-level code (outside functions) reduces something; asked once per file."""
        memo = self.file.memo
        if "module-level-reduces" not in memo:
            source = self.file.analysis.source
            memo["module-level-reduces"] = any(
                self._is_reduction(call) for call in source.of_types(cst.Call) if source.enclosing_function(call) is None
            )
        return bool(memo["module-level-reduces"])

    def _callees(self, function: cst.FunctionDef) -> set[cst.FunctionDef]:
        """``function`` and this file's functions it calls or names, transitively: CvT's
        ``test()`` hands ``_meter_reduce if distributed else ...`` to the code that averages
        its meters, a reduction it runs without calling it by name."""
        source = self.file.analysis.source
        found: set[cst.FunctionDef] = set()
        todo = [function]
        while todo:
            current = todo.pop()
            if current in found:
                continue
            found.add(current)
            for name in source.of_types_in(current.body, cst.Name):
                assert isinstance(name, cst.Name)
                todo.extend(source.functions.get(name.value, []))
        return found

    def _reduces(self, function: cst.FunctionDef) -> bool:
        return any(self._is_reduction(call) for call in self.file.analysis.source.of_types_in(function, cst.Call))

    def _is_reduction(self, call: cst.Call) -> bool:
        name = callee_name(call)
        return dist_function(self, call) in REDUCTIONS or (name is not None and bool(REDUCTION_HELPER.search(name)))

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

    # ------------------------------------------------------------ is it an evaluation loop
    def _project_training_step(self, call: cst.Call) -> bool:
        """``engine.train_one_epoch(...)`` or ``trainer.do_pass(batch)`` where ``trainer`` was
        made by a class of the project's modules (``XTrainer(cfg).train()``) whose method calls
        backward or an optimizer step."""
        source = self.file.analysis.source
        helper = source.project.helper(call)
        if helper is not None:
            return helper.trains
        func = call.func
        if not isinstance(func, cst.Attribute) or not is_simple_reference(func.value):
            return False
        for _, value in source.assignments.get(code(func.value), []):
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
                value = value.func.value  # XTrainer(cfg).train() / .cuda()
            if isinstance(value, cst.Call) and is_simple_reference(value.func):
                method = source.project.named(f"{code(value.func)}.{func.attr.value}")
                if method is not None and method.trains:
                    return True
        return False

    def _is_metric_loop(self, loop: cst.For) -> bool:
        accumulates = False
        for call in of_types(loop.body, cst.Call):
            assert isinstance(call, cst.Call)
            name = callee_name(call)
            if name in self._training_functions or isinstance(call.func, cst.Attribute) and name in _TRAINING_CALLS:
                return False  # a training loop (also through a step function of this file)
            if self._project_training_step(call):
                return False  # through a function or a class's method of the project's modules
            if not isinstance(call.func, cst.Attribute):
                continue
            if name == "update" and METER.search(code(call.func.value)):
                accumulates = True
        for augmented in of_types(loop.body, cst.AugAssign):
            assert isinstance(augmented, cst.AugAssign)
            if not isinstance(augmented.operator, cst.AddAssign):
                continue
            target: cst.BaseExpression = augmented.target
            while isinstance(target, cst.Subscript):
                target = target.value
            text = target.attr.value if isinstance(target, cst.Attribute) else code(target)
            if METRIC.search(text):
                accumulates = True
        return accumulates
