from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.ranks import DISTRIBUTED, REST
from ddpify.analysis.running_metrics import closure, derivations, reads, references, result_slots, running_measures
from ddpify.check.calls import nodes
from ddpify.check.metric_loops import reduces, reduces_through, trains
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import has_reduction
from ddpify.tree.cstutil import callee_name, code, of_types

if TYPE_CHECKING:
    from ddpify.check.file_info import FileInfo

# Calls that show a value to the user or store it as the run's result.
_REPORTERS = frozenset({"print", "info", "debug", "warning", "warn", "log", "add_scalar", "add_scalars", "log_metrics"})
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
        "value computed from it, or the function's result at a caller of this file, or what a training method of a project "
        "module returns from such a loop: `loss, acc = trainer.train_network(loader)`) reaches a log call "
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
            found = running_measures(source, loop)
            if not found or not trains(self, loop) or not context.ranks(loop).may & DISTRIBUTED:
                continue
            if {code(n) for n in of_types(loop.iter, cst.Name, cst.Attribute)} & plain:
                continue  # every rank draws the whole set: DDP003's finding, and equal values
            use = self._use(loop, found, file_reduces)
            if use is not None:
                self._report(use, f"{_names(found)}, which the training loop at line {source.line(loop)} accumulates")
        for assign in source.of_types(cst.Assign):  # `loss, acc = trainer.train_network(loader)` of a project module
            helper = source.project_call(assign.value) if isinstance(assign.value, cst.Call) else None
            if helper is None or not helper.returns_metrics or not context.ranks(assign).may & DISTRIBUTED:
                continue
            function = source.enclosing_function(assign)
            if file_reduces if function is None else reduces(self, function):
                continue
            results = {code(n) for target in assign.targets for n in references(_elements(target.target, helper.returns_metrics))}
            index = self._index(function)
            use = index.first_use(index.derived(results), self._shown_on_some_ranks)
            if use is not None:
                assert isinstance(assign.value, cst.Call)
                self._report(use, f"{code(assign.value.func)}(), whose training loop in the project's module accumulates it")

    def _report(self, use: tuple[cst.CSTNode, str], origin: str) -> None:
        what = "compared" if isinstance(use[0], cst.Comparison) else "logged"
        self.report(
            use[0],
            f"{use[1]} is {what} here, and it comes from {origin} from this rank's shard only: nothing reduces it "
            "across ranks; sum the values (and their counts) with dist.all_reduce first",
        )

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
        slots = result_slots(index.returned, tracked) if function is not None else ()
        # Callers by name only where the name is the file's one function of it: N classes whose
        # `run` methods each return a loss would make every `x.run()` a caller of every one.
        if function is not None and slots and len(source.functions.get(function.name.value, [])) == 1:
            for site in self.file.analysis.context.call_sites(function):
                caller = source.enclosing_function(site)
                if file_reduces if caller is None else reduces(self, caller):
                    continue
                statement = next((a for a in self.ancestors(site) if isinstance(a, cst.Assign)), None)
                if statement is None or statement.value is not site:
                    continue
                results = {code(n) for target in statement.targets for n in references(_elements(target.target, slots))}
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
        self.compared: dict[str, cst.Comparison] = {}  # the first comparison reading each reference
        self.logged: dict[str, list[cst.Call]] = {}
        self.returned: list[cst.BaseExpression] = []  # the values the scope's returns give back
        self.order: dict[cst.CSTNode, int] = {}  # comparisons and calls in source order
        self.derives = derivations([a for a in of_types(scope, cst.Assign) if isinstance(a, cst.Assign)])
        for comparison in of_types(scope, cst.Comparison):
            assert isinstance(comparison, cst.Comparison)
            self.order[comparison] = len(self.order)
            if any(isinstance(target.operator, _ORDERINGS) for target in comparison.comparisons):
                for text in reads(comparison):
                    self.compared.setdefault(text, comparison)
        for call in of_types(scope, cst.Call):
            assert isinstance(call, cst.Call)
            self.order[call] = len(self.order)
            if callee_name(call) in _REPORTERS:
                for text in {t for arg in call.args for t in reads(arg.value)}:
                    self.logged.setdefault(text, []).append(call)
        self.returned = [r.value for r in of_types(scope, cst.Return) if isinstance(r, cst.Return) and r.value is not None]

    def derived(self, names: set[str]) -> set[str]:
        """``names`` and everything the scope assigns from them, transitively."""
        return closure(self.derives, names)

    def first_use(self, tracked: set[str], shown: Callable[[cst.Call], bool]) -> tuple[cst.CSTNode, str] | None:
        """The first comparison reading ``tracked``, else the first log call some ranks only run."""
        compared = [(self.compared[t], t) for t in sorted(tracked) if t in self.compared]
        if compared:
            return min(compared, key=lambda found: self.order[found[0]])
        logged = [(call, t) for t in sorted(tracked) for call in self.logged.get(t, ()) if shown(call)]
        return min(logged, key=lambda found: self.order[found[0]]) if logged else None


def _names(found: set[str]) -> str:
    listed = sorted(found)
    return ", ".join(listed[:3]) + (", ..." if len(listed) > 3 else "")


def _elements(target: cst.BaseExpression, slots: tuple[int, ...]) -> cst.BaseExpression:
    """The part of an assignment target that receives the returned ``slots`` (-1: the whole)."""
    if -1 in slots or not isinstance(target, (cst.Tuple, cst.List)):
        return target
    return cst.Tuple([e for i, e in enumerate(target.elements) if i in slots])
