from __future__ import annotations

import libcst as cst

from ddpify.analysis.batch_calls import loader_step
from ddpify.analysis.dataflow import Role
from ddpify.analysis.keyed_results import keyed_by_batch
from ddpify.analysis.ranks import LEAD, REST
from ddpify.analysis.role_hints import is_eval_name, is_train_name
from ddpify.check.calls import is_false, is_true, keyword_value, runtime_function
from ddpify.check.metric_loops import accumulators, unreduced_here
from ddpify.check.places import assigned_to
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_name

_PADDED, _SHARD_ONLY = "padded", "shard only"
SAMPLER = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})


class PaddedEvalSampler(Rule):
    code = "DDP015"
    default = True
    name = "padded-eval-sampler"
    message = (
        "DistributedSampler on an evaluation set without drop_last=True pads it by repeating samples "
        "up to a multiple of the world size: those samples are counted twice"
    )
    severity = "warning"
    why = (
        "To give every rank the same number of batches, DistributedSampler (drop_last=False, its "
        "default) appends copies of the first indices until the length divides by the world size. For "
        "training that is harmless; for evaluation the repeated samples enter the metric twice, so "
        "accuracy and loss are wrong (up to N-1 extra samples) and change with the number of GPUs "
        "(pytorch/pytorch#25162 'Incorrect Validation Accuracy Due to Distributed Sampler', "
        "pytorch/examples#1063). Either evaluate the full set on every rank without a sampler (what "
        "ddpify's converter does: exact and identical metrics everywhere), or shard with "
        "`drop_last=True`, evaluate the remainder separately and all-reduce sums and counts, as "
        "pytorch/examples imagenet/main.py does. A sampler counts as an evaluation sampler when its "
        "name, its dataset's or its loader's name says val/test/eval/dev, or it has shuffle=False in a "
        "loader not named for training whose batches do not reach backward(). The sampler may live in a project "
        "module: a loader a project function returns through a DistributedSampler it builds under a launch test "
        "(`if args.distributed:`, `if dist.is_initialized():`; a test around the return that hands it out, such as "
        "`if is_train:`, does not count) without drop_last is reported where this file binds it, when the names it flows into "
        "say val/test/eval and none says train. Where nothing combines the ranks' results "
        "(predictions each rank writes out), the padding never reaches rank 0's share, but every other share is "
        "missing from what rank 0 writes or logs: that is reported instead (accumulated metrics nobody reduces are "
        "DDP014's). Report only."
    )
    fix_notes = "No automatic fix."
    false_positives = (
        "Not reported: loops that keep each sample's result under a key read from its batch (predictions by image id, "
        "in the file or in the project function the loader is handed to, such as the DETR-family COCO evaluation), "
        "and loops only rank 0 runs (the padding goes to the last ranks). Still reported: evaluators of other files "
        "this one cannot read that merge by id; scripts that accept the padding knowingly; a loader built on a path "
        "no caller takes."
    )
    valid = (
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_loader = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set, shuffle=True))
val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)  # remainder evaluated separately
val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)
""",
        """\
import ddpify.runtime as ddpify
from torch.utils.data import DataLoader

train_loader = ddpify.distributed_loader(train_set, batch_size=32, shuffle=True)
val_loader = DataLoader(val_set, batch_size=64, shuffle=False)  # unsharded: every rank sees all of it
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = DistributedSampler(train_set, shuffle=False)  # data is pre-shuffled on disk
train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
""",
        """\
import ddpify.runtime as ddpify

data = ddpify.distributed_loader(dataset, batch_size=32, shuffle=False)  # its batches reach backward(): it trains
for x, y in data:
    loss_fn(model(x), y).backward()
""",
        """\
import ddpify.runtime as ddpify

val_loader = ddpify.distributed_loader(val_set, batch_size=64, only_when_training=True)  # whole on evaluation passes
""",
        """\
import torch
from torch.utils.data import DataLoader, DistributedSampler

val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
predictions = {}
for images, image_ids in val_loader:  # a repeated image overwrites its own entry
    for i, output in enumerate(model(images)):
        predictions[int(image_ids[i])] = output
""",
        """\
import torch
from torch.utils.data import DataLoader, DistributedSampler


def evaluate(model, loader, evaluator):
    for samples, targets in loader:
        results = model(samples)
        evaluator.update({t["image_id"].item(): r for t, r in zip(targets, results)})


def main(rank):
    val_sampler = DistributedSampler(val_set, shuffle=False)
    evaluate(model, DataLoader(val_set, batch_size=2, sampler=val_sampler), evaluator)
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
losses = {}
for step, (images, labels) in enumerate(val_loader):  # a batch counter is no sample's key
    losses[step] = criterion(model(images), labels).item()
    log({name: value for name, value in metrics(images, labels).items()})
gathered = [None] * dist.get_world_size()
dist.all_gather_object(gathered, losses)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set))
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

sampler = DistributedSampler(dataset, shuffle=False)
loader = DataLoader(dataset, batch_size=64, sampler=sampler)
"""
        ),
        Invalid(
            """\
import ddpify.runtime as ddpify

test_loader = ddpify.distributed_loader(test_set, batch_size=64, shuffle=False)
"""
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualified(node) & SAMPLER:
            self._check_sampler(node)
        elif runtime_function(self, node) == "distributed_loader":
            self._check_runtime_loader(node)
        elif (helper := self.file.analysis.source.project_call(node)) is not None and helper.padded_loaders:
            self._check_helper_loaders(node, helper.padded_loaders)

    def _check_sampler(self, call: cst.Call) -> None:
        if is_true(keyword_value(call, "drop_last")):
            return
        labels: list[str] = []
        target = assigned_to(self, call)
        if target is not None:
            labels.append(target)
        loaders = self._loaders_given(call)
        for loader in loaders:
            labels.extend(filter(None, [assigned_to(self, loader), _dataset(loader)]))
        dataset = _dataset(call)
        if dataset is not None:
            labels.append(dataset)
        evaluation = [label for label in labels if is_eval_name(label)]
        unshuffled = is_false(keyword_value(call, "shuffle")) and not any(is_train_name(label) for label in labels)
        harm = self._harm([(loader, None) for loader in loaders]) if evaluation or unshuffled else None
        if harm is None:
            return
        if harm == _SHARD_ONLY:
            self.report(
                call,
                f"DistributedSampler shards the evaluation set {(evaluation or labels or ['here'])[0]}, and nothing combines the ranks' "
                "results: what each rank writes, logs or decides covers its own 1/N share only",
            )
        elif evaluation and any(is_true(keyword_value(loader, "drop_last")) for loader in loaders):
            self.report(  # vdvae: the loader's drop_last drops each shard's partial last batch, padding or not
                call,
                f"DistributedSampler on the evaluation set {evaluation[0]} pads it with repeated samples, and the loader's drop_last=True "
                "then drops each rank's partial last batch: which samples the metrics count depends on the number of processes",
            )
        elif evaluation:
            self.report(
                call,
                f"DistributedSampler on the evaluation set {evaluation[0]} without drop_last=True pads it with repeated samples, which the metrics count twice",
            )
        else:
            self.report(
                call,
                "DistributedSampler with shuffle=False (an evaluation set?) and no drop_last=True pads it with repeated samples, which the metrics count twice",
            )

    def _check_helper_loaders(self, call: cst.Call, slots: tuple[int, ...]) -> None:
        """A loader a project function returns through a padding ``DistributedSampler``
        (``val_loader = get_val_dataloader(val_set, args)``, the sampler in ``data.py``): an
        evaluation loader when the names it flows into say val/test/eval and none says train."""
        values = self.file.analysis.dataflow.values
        for slot in slots:
            start = (call, None if slot == -1 else slot)
            labels = [
                code(o.node) for o in values.flow(*start, outer=loader_step).occurrences if isinstance(o.node, (cst.Name, cst.Attribute))
            ]
            evaluation = [label for label in labels if is_eval_name(label)]
            if not evaluation or any(is_train_name(label) for label in labels):
                continue
            harm = self._harm([start])
            made = f"{evaluation[0]} comes from {code(call.func)}(), whose DistributedSampler"
            if harm == _SHARD_ONLY:
                self.report(
                    call,
                    f"{made} shards the evaluation set, and nothing combines the ranks' results: what each rank writes, logs or decides covers its own 1/N share only",
                )
            elif harm == _PADDED:
                self.report(
                    call, f"{made} (no drop_last=True) pads the evaluation set with repeated samples, which the metrics count twice"
                )

    def _harm(self, loaders: list[tuple[cst.CSTNode, int | None]]) -> str | None:
        """What the sampler does to the evaluation: None where the repeated samples count once
        (every loop over the loaders, here, in the file's functions they are handed to, or in a
        project function, keeps each sample's result under a key read from its batch:
        ``keyed_results``; or runs on rank 0 only, where the padding never goes); _SHARD_ONLY
        where nothing combines the ranks' results (the padding then never reaches rank 0, but
        rank 0's outputs cover its share only: predictions written per rank; accumulated
        metrics are DDP014's finding, one problem one finding); _PADDED otherwise."""
        analysis = self.file.analysis
        source, context = analysis.source, analysis.context
        loops: list[cst.For] = []
        values = analysis.dataflow.values
        starts = list(loaders)
        entered: set[cst.CSTNode] = set()
        while starts:
            for occurrence in values.flow(*starts.pop(), outer=loader_step).occurrences:
                parent = source.parent(occurrence.node)
                if isinstance(parent, cst.WithItem) and parent.asname is not None and isinstance(parent.asname.name, cst.Name):
                    if parent.asname.name not in entered:
                        entered.add(parent.asname.name)
                        starts.append((parent.asname.name, None))  # with tqdm(loader) as bar: for batch in bar
                elif isinstance(parent, cst.For) and parent.iter is occurrence.node:
                    loops.append(parent)
                elif isinstance(parent, cst.Arg) and isinstance(call := source.parent(parent), cst.Call):
                    helper = source.project_call(call)
                    if helper is not None and call.args.index(parent) in helper.keys_batches:
                        return None  # detr's evaluate(model, ..., data_loader_val, ...) keys by image id
        harms = set()
        for loop in loops:
            if keyed_by_batch(source, loop) or not context.ranks(loop).may & (LEAD | REST):
                continue
            if self._never_combined(loop):
                harms |= set() if accumulators(self, loop) else {_SHARD_ONLY}
            else:
                harms.add(_PADDED)
        return _PADDED if not loops or _PADDED in harms else _SHARD_ONLY if harms else None

    def _never_combined(self, loop: cst.For) -> bool:
        """Nothing the loop's function reaches, or its callers, combines values across ranks
        (``metric_loops.unreduced_here``), and neither its function nor the file's functions that
        one calls run a project helper that uses the process group (``utils.torch_dist_sum``,
        ``get_cpu_stats_over_ranks`` may reduce where no name says so)."""
        source = self.file.analysis.source
        function = source.enclosing_function(loop)
        if function is None or not unreduced_here(self, loop):
            return False
        values = self.file.analysis.dataflow.values
        reached = [function, *(f for c in source.of_types_in(function, cst.Call) for f, _ in values.callees(c))]  # eval_step(...)
        calls = [c for f in dict.fromkeys(reached) for c in source.of_types_in(f, cst.Call)]
        return not any((h := source.project_call(c)) is not None and h.distributed for c in calls)

    def _loaders_given(self, sampler: cst.Call) -> list[cst.Call]:
        """The DataLoaders the sampler reaches as ``sampler=`` (through the variables that hold
        it, in its own scope: a ``sampler`` of another function is another sampler)."""
        source = self.file.analysis.source
        found: list[cst.Call] = []
        for occurrence in self.file.analysis.dataflow.values.flow(sampler).occurrences:
            arg = source.parent(occurrence.node)
            if isinstance(arg, cst.Arg) and arg.value is occurrence.node and arg.keyword is not None and arg.keyword.value == "sampler":
                call = source.parent(arg)
                if isinstance(call, cst.Call) and self.qualified(call) & names.DATALOADER and call not in found:
                    found.append(call)
        return found

    def _check_runtime_loader(self, call: cst.Call) -> None:
        if is_true(keyword_value(call, "only_when_training")):
            return  # evaluation passes read the whole set: only training passes are sharded
        if is_true(keyword_value(call, "drop_last")) or any(is_name(a.keyword, "sampler", "batch_sampler") for a in call.args):
            return
        target = assigned_to(self, call) or ""
        if is_eval_name(target):
            self.report(
                call,
                f"ddpify.distributed_loader shards the evaluation set of {target} and pads it with repeated samples, which the metrics count twice: evaluate with a plain DataLoader on every rank",
            )
        elif is_false(keyword_value(call, "shuffle")) and not is_train_name(target) and not self._trains(call):
            self.report(
                call,
                "ddpify.distributed_loader with shuffle=False (an evaluation set?) pads the data with repeated samples, which the metrics count twice",
            )

    def _trains(self, loader: cst.Call) -> bool:
        """Its batches reach backward() (``ddpify.analysis.dataflow``): a training loader."""
        return self.file.facts.analysis.dataflow.role_of(loader) is Role.TRAIN


def _dataset(call: cst.Call) -> str | None:
    value = keyword_value(call, "dataset")
    if value is None and call.args and call.args[0].keyword is None and not call.args[0].star:
        value = call.args[0].value
    return code(value) if value is not None else None
