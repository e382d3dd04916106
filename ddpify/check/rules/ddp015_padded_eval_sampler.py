from __future__ import annotations

import libcst as cst

from ddpify.analysis.dataflow import Role
from ddpify.analysis.role_hints import is_eval_name, is_train_name
from ddpify.check.calls import every_call, is_false, is_true, keyword_value, runtime_function
from ddpify.check.places import assigned_to
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_name

SAMPLER = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})


class PaddedEvalSampler(Rule):
    code = "DDP015"
    opt_in = (
        "Whether padding harms depends on the evaluator: the DETR-family COCO evaluators merge predictions by "
        "image id and drop the duplicates, which the rule cannot see; it was wrong there on real code."
    )
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
        "loader not named for training whose batches do not reach backward(). Report only."
    )
    fix_notes = "No automatic fix."
    false_positives = "Evaluators that merge predictions by sample id (the DETR-family COCO evaluator), which removes the padding duplicates; scripts that accept the padding knowingly (a printed warning)."
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
    )
    invalid = (
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

    def __init__(self, file) -> None:
        super().__init__(file)
        self._loaders_of: dict[str, list[cst.Call]] = {}  # loaders by the sampler variable they receive

    def visit_Module(self, node: cst.Module) -> None:
        for call in every_call(node):
            if self.qualified(call) & names.DATALOADER:
                sampler = keyword_value(call, "sampler")
                if sampler is not None:
                    self._loaders_of.setdefault(code(sampler), []).append(call)

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualified(node) & SAMPLER:
            self._check_sampler(node)
        elif runtime_function(self, node) == "distributed_loader":
            self._check_runtime_loader(node)

    def _check_sampler(self, call: cst.Call) -> None:
        if is_true(keyword_value(call, "drop_last")):
            return
        labels: list[str] = []
        target = assigned_to(self, call)
        if target is not None:
            labels.append(target)
            for loader in self._loaders_of.get(target, []):
                labels.extend(filter(None, [assigned_to(self, loader), _dataset(loader)]))
        receiving = self._loader_receiving(call)
        if receiving is not None:
            labels.extend(filter(None, [assigned_to(self, receiving), _dataset(receiving)]))
        dataset = _dataset(call)
        if dataset is not None:
            labels.append(dataset)
        evaluation = [label for label in labels if is_eval_name(label)]
        if evaluation:
            self.report(
                call,
                f"DistributedSampler on the evaluation set {evaluation[0]} without drop_last=True pads it with repeated samples, which the metrics count twice",
            )
        elif is_false(keyword_value(call, "shuffle")) and not any(is_train_name(label) for label in labels):
            self.report(
                call,
                "DistributedSampler with shuffle=False (an evaluation set?) and no drop_last=True pads it with repeated samples, which the metrics count twice",
            )

    def _loader_receiving(self, sampler: cst.Call) -> cst.Call | None:
        arg = self.parent(sampler)
        if isinstance(arg, cst.Arg) and arg.keyword is not None and arg.keyword.value == "sampler":
            call = self.parent(arg)
            if isinstance(call, cst.Call) and self.qualified(call) & names.DATALOADER:
                return call
        return None

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
