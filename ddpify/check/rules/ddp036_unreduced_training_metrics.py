from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.ranks import DISTRIBUTED, REST
from ddpify.check.calls import nodes
from ddpify.check.metric_loops import accumulators, reduces, reduces_through, trains
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import has_reduction
from ddpify.tree.cstutil import callee_name, code, of_types

if TYPE_CHECKING:
    from ddpify.check.file_info import FileInfo

# Calls that show a value to the user or store it as the run's result.
_REPORTERS = frozenset({"print", "info", "debug", "warning", "warn", "log", "add_scalar", "add_scalars", "log_metrics"})
# What a training loop accumulates that is a metric (not a step or sample counter).
_METRIC = re.compile(r"loss|acc|correct|top\d|metric|score|err|meter|hit|psnr|ssim|iou|dice|f1|prec|recall|auc", re.I)
# Meters that time or count, not measure the model: `batch_time.update(...)`.
_NOT_A_METRIC = re.compile(r"time|speed|throughput|memory|mem$|^lr$|learning_rate|^data(_meter)?$", re.I)
_ORDERINGS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)


class UnreducedTrainingMetrics(Rule):
    code = "DDP036"
    default = True
    name = "unreduced-training-metrics"
    message = (
        "a training loop's running loss or accuracy, accumulated from this rank's shard only, is logged "
        "or acted on without being reduced across ranks"
    )
    severity = "warning"
    why = (
        "Each rank trains on its own shard, so the loss sum, the accuracy count or the meter a training "
        "loop accumulates is that shard's: the epoch loss that rank 0 logs is one rank's of N, and a "
        "best-checkpoint choice, an early stop or a ReduceLROnPlateau step taken on it follows one "
        "shard (or differs per rank, and the ranks part ways). Sum the values and their counts with "
        "`dist.all_reduce` before logging or comparing them (pytorch/examples imagenet's "
        "`AverageMeter.all_reduce`, torchvision references' `synchronize_between_processes`). The rule "
        "looks for a loop that trains (backward or an optimizer step, also through a function of this "
        "file or of the project's modules) in a file that wraps a model in DDP or shards the loop's "
        "loader, with `+=` into a loss/accuracy-like name or a meter's `update`, whose value (or a "
        "value computed from it, or the function's result at a caller of this file) reaches a log call "
        "(print, a logger, `add_scalar`, `set_postfix`, ...) or a comparison, where neither the loop's "
        "function, the functions it calls nor that caller reduce anything. A value only accumulated, "
        "or printed by every rank with the others (DDP012's finding), is not reported here."
    )
    fix_notes = "No automatic fix: which values to reduce, and whether a per-rank log is meant, is a decision."
    false_positives = "A metric reduced by a helper of another module whose name does not say so (`sync_meters(...)`); a per-rank log that names its rank on purpose through a logger that every rank prints."
    valid = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for epoch in range(10):
    running, batches = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item()
        batches += 1
    totals = torch.tensor([running, batches], dtype=torch.float64)
    dist.all_reduce(totals)
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: loss {totals[0] / totals[1]:.3f}")
""",
        """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
total_loss = 0.0
for x, y in loader:  # accumulated, never shown nor compared
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.item()
""",
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train_epoch(model, loader, optimizer, meter):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        meter.update(loss.item(), x.size(0))
    meter.all_reduce()
    return meter.avg


model = DDP(model)
train_loss = train_epoch(model, loader, optimizer, meter)
if dist.get_rank() == 0:
    print("train loss", train_loss)
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for epoch in range(10):
    epoch_loss = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: loss {epoch_loss / len(loader):.3f}")
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train_one_epoch(model, loader, optimizer):
    losses = AverageMeter()
    for images, target in loader:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), images.size(0))
    return losses.avg


model = DDP(model)
best = float("inf")
for epoch in range(args.epochs):
    train_loss = train_one_epoch(model, train_loader, optimizer)
    if train_loss < best and dist.get_rank() == 0:
        best = train_loss
        torch.save(model.module.state_dict(), "best.pt")
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, writer, epoch):
    correct = total = 0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        criterion(out, y).backward()
        optimizer.step()
        correct += (out.argmax(1) == y).sum().item()
        total += y.numel()
    accuracy = correct / total
    if dist.get_rank() == 0:
        writer.add_scalar("train/accuracy", accuracy, epoch)


model = DDP(model)
"""
        ),
    )

    def __init__(self, file: FileInfo) -> None:
        super().__init__(file)
        self._indexes: dict[cst.FunctionDef | None, _ScopeIndex] = {}

    def visit_Module(self, node: cst.Module) -> None:
        context = self.file.analysis.context
        plain = self.file.analysis.samplers.plain
        source = self.file.analysis.source
        file_reduces = has_reduction(self, node)
        for loop in nodes(node, cst.For):
            recomputed = _recomputed(loop)
            found = {
                name
                for name, at in accumulators(self, loop).items()
                if _is_metric(name, at) and self._innermost_loop(at) is loop and name not in recomputed
            }
            if not found or not trains(self, loop) or not context.ranks(loop).may & DISTRIBUTED:
                continue
            if {code(n) for n in of_types(loop.iter, cst.Name, cst.Attribute)} & plain:
                continue  # every rank draws the whole set: DDP003's finding, and equal values
            use = self._use(loop, found, file_reduces)
            if use is not None:
                what = "compared" if isinstance(use[0], cst.Comparison) else "logged"
                self.report(
                    use[0],
                    f"{use[1]} is {what} here, and it comes from {_names(found)}, which the training loop at "
                    f"line {source.line(loop)} accumulates from this rank's shard only: nothing reduces it across ranks; "
                    "sum the values (and their counts) with dist.all_reduce first",
                )

    def _innermost_loop(self, node: cst.CSTNode) -> cst.For | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.For)), None)

    def _use(self, loop: cst.For, names: set[str], file_reduces: bool) -> tuple[cst.CSTNode, str] | None:
        """Where the loop's accumulators (or what is computed from them) are compared or shown:
        where the loop's function returns them, at a caller of this file (the epoch's result);
        else in the loop's own function. A comparison (a best-so-far, a threshold) comes before a
        log line: acting on one shard's value is the graver consequence."""
        source = self.file.analysis.source
        function = source.enclosing_function(loop)
        if file_reduces if function is None else reduces_through(self, function):
            return None
        index = self._index(function)
        tracked = index.derived(names)
        slots = index.result_slots(tracked) if function is not None else set()
        if function is not None and slots != set():
            for site in self.file.analysis.context.call_sites(function):
                caller = source.enclosing_function(site)
                if file_reduces if caller is None else reduces(self, caller):
                    continue
                statement = next((a for a in self.ancestors(site) if isinstance(a, cst.Assign)), None)
                if statement is None or statement.value is not site:
                    continue
                results = {code(n) for target in statement.targets for n in _references(_elements(target.target, slots))}
                where = self._index(caller)
                found = where.first_use(where.derived(results), self._shown_on_some_ranks)
                if found is not None:
                    return found
        return index.first_use(tracked, self._shown_on_some_ranks)

    def _index(self, function: cst.FunctionDef | None) -> _ScopeIndex:
        """The index of a function (None: the module), built once per file."""
        if function not in self._indexes:
            self._indexes[function] = _ScopeIndex(function if function is not None else self.file.analysis.source.module)
        return self._indexes[function]

    def _shown_on_some_ranks(self, call: cst.Call) -> bool:
        """Not every rank runs this log call: every rank showing its own value is DDP012's and
        DDP013's finding, or meant."""
        return not self.file.analysis.context.ranks(call).may & REST


class _ScopeIndex:
    """A scope's assignments, ordering comparisons, log calls and returned values, by the
    references they read: each loop's question is then answered by look-ups, not by another walk
    of the scope (a file of many training loops stays linear)."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.derives: dict[str, set[str]] = {}
        self.compared: dict[str, cst.Comparison] = {}  # the first comparison reading each reference
        self.logged: dict[str, list[cst.Call]] = {}
        self.returned: list[cst.BaseExpression] = []  # the values the scope's returns give back
        self.order: dict[cst.CSTNode, int] = {}  # comparisons and calls in source order
        for assign in of_types(scope, cst.Assign):
            assert isinstance(assign, cst.Assign)
            targets = {code(n) for target in assign.targets for n in _references(target.target)}
            for text in _reads(assign.value):
                self.derives.setdefault(text, set()).update(targets)
        for comparison in of_types(scope, cst.Comparison):
            assert isinstance(comparison, cst.Comparison)
            self.order[comparison] = len(self.order)
            if any(isinstance(target.operator, _ORDERINGS) for target in comparison.comparisons):
                for text in _reads(comparison):
                    self.compared.setdefault(text, comparison)
        for call in of_types(scope, cst.Call):
            assert isinstance(call, cst.Call)
            self.order[call] = len(self.order)
            if callee_name(call) in _REPORTERS:
                for text in {t for arg in call.args for t in _reads(arg.value)}:
                    self.logged.setdefault(text, []).append(call)
        self.returned = [r.value for r in of_types(scope, cst.Return) if isinstance(r, cst.Return) and r.value is not None]

    def result_slots(self, tracked: set[str]) -> set[int] | None:
        """Which elements of the returned tuple read ``tracked`` (``return epoch_loss, last_lr``:
        slot 0); None: the whole result does, or is no tuple."""
        slots: set[int] = set()
        for value in self.returned:
            if isinstance(value, cst.Tuple):
                slots.update(i for i, element in enumerate(value.elements) if _reads(element.value) & tracked)
            elif _reads(value) & tracked:
                return None
        return slots

    def derived(self, names: set[str]) -> set[str]:
        """``names`` and everything the scope assigns from them, transitively."""
        tracked, todo = set(names), list(names)
        while todo:
            for target in self.derives.get(todo.pop(), ()):
                if target not in tracked:
                    tracked.add(target)
                    todo.append(target)
        return tracked

    def first_use(self, tracked: set[str], shown: Callable[[cst.Call], bool]) -> tuple[cst.CSTNode, str] | None:
        """The first comparison reading ``tracked``, else the first log call some ranks only run."""
        compared = [(self.compared[t], t) for t in sorted(tracked) if t in self.compared]
        if compared:
            return min(compared, key=lambda found: self.order[found[0]])
        logged = [(call, t) for t in sorted(tracked) for call in self.logged.get(t, ()) if shown(call)]
        return min(logged, key=lambda found: self.order[found[0]]) if logged else None


def _is_metric(name: str, node: cst.CSTNode) -> bool:
    """A loss, accuracy or score accumulator or meter, not a counter (``steps += 1``) nor a
    timer (``batch_time.update(...)``)."""
    last = name.rsplit(".", 1)[-1]
    if isinstance(node, cst.AugAssign):
        return bool(_METRIC.search(last)) and not isinstance(node.value, (cst.Integer, cst.Float))
    return not _NOT_A_METRIC.search(last)


def _names(found: set[str]) -> str:
    listed = sorted(found)
    return ", ".join(listed[:3]) + (", ..." if len(listed) > 3 else "")


def _recomputed(loop: cst.For) -> set[str]:
    """Names the loop's body assigns a computed value (``loss = criterion(...)`` before ``loss +=
    aux_loss``): a value of this step, not a running total (a reset to a constant is not this)."""
    return {
        code(n)
        for assign in of_types(loop.body, cst.Assign)
        if isinstance(assign, cst.Assign) and not isinstance(assign.value, (cst.Integer, cst.Float))
        for target in assign.targets
        for n in _references(target.target)
    }


def _elements(target: cst.BaseExpression, slots: set[int] | None) -> cst.BaseExpression:
    """The part of an assignment target that receives the returned ``slots``."""
    if slots is None or not isinstance(target, (cst.Tuple, cst.List)):
        return target
    return cst.Tuple([e for i, e in enumerate(target.elements) if i in slots])


def _references(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The names and attribute or subscript references a target binds (``a, b``, ``rs['train']``)."""
    if isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from _references(element.value)
    elif isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
        yield node


def _reads(node: cst.CSTNode) -> set[str]:
    """The references ``node`` reads, as text: names, attributes (``meter.avg``), subscripts."""
    return {code(n) for n in of_types(node, cst.Name, cst.Attribute, cst.Subscript)}
