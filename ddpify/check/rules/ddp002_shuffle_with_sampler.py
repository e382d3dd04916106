from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names
from ddpify.convert.rewrites import fix_commas
from ddpify.tree.cstutil import code, is_simple_reference, of_types


class ShuffleWithSampler(Rule):
    code = "DDP002"
    default = True
    name = "shuffle-with-sampler"
    message = "DataLoader gets both shuffle=True and a sampler: DataLoader raises 'sampler option is mutually exclusive with shuffle'"
    severity = "error"
    why = (
        "A sampler decides the order, so `DataLoader(shuffle=True, sampler=...)` raises at start-up "
        "(ultralytics/yolov3#231). With a DistributedSampler the shuffle belongs to the sampler "
        "(`DistributedSampler(dataset, shuffle=True)`, its default). A shuffle flag that follows the "
        "sampler (`shuffle=(train_sampler is None)`, `shuffle=not args.distributed`) is the usual "
        "correct idiom and is not reported."
    )
    fix = "safe"
    fix_notes = (
        "With a sampler built in the call (never None), the fix drops `shuffle=True`. With a sampler "
        "variable, which is None in a single-process run, it writes `shuffle=(train_sampler is None)`: "
        "the single-process run keeps shuffling, the distributed one leaves the order to the sampler. "
        "A shuffle flag that is not a literal gets no fix."
    )
    false_positives = "A shuffle flag computed elsewhere that is False whenever the sampler is set (`shuffle=opts.shuffle`)."
    valid = (
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=True), shuffle=False)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = DistributedSampler(dataset) if dist.is_initialized() else None
loader = DataLoader(dataset, batch_size=32, shuffle=(train_sampler is None), sampler=train_sampler)
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=4, shuffle=True, sampler=DistributedSampler(dataset))
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = DistributedSampler(dataset) if args.distributed else None
loader = DataLoader(dataset, batch_size=32, shuffle=True, sampler=train_sampler)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = DistributedSampler(dataset) if args.distributed else None
loader = DataLoader(dataset, batch_size=32, shuffle=(train_sampler is None), sampler=train_sampler)
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & names.DATALOADER:
            return
        keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
        shuffle = keywords.get("shuffle")
        sampler = keywords.get("sampler") or keywords.get("batch_sampler")
        if shuffle is None or sampler is None or _constant(sampler.value) is False:
            return
        truth = _constant(shuffle.value)
        if truth is False:
            return
        if truth is None and not self._independent(shuffle.value, sampler.value):
            return  # shuffle=(train_sampler is None), shuffle=not args.distributed: never both
        self.report(node, replacement=self._fixed(node, shuffle, sampler) if truth else None)

    def _independent(self, shuffle: cst.BaseExpression, sampler: cst.BaseExpression) -> bool:
        """A shuffle flag that does not follow the sampler: it names nothing the sampler
        expression names and is no distributed/rank test."""
        if {code(n) for n in of_types(shuffle, cst.Name)} & {code(n) for n in of_types(sampler, cst.Name)}:
            return False
        if isinstance(sampler, cst.Name) and self._assigned_none(sampler.value):
            return False  # sampler = None in the single-process branch: shuffle may follow the same test
        return not self.file.analysis.rank_tests.ranks(shuffle).depends_on_process

    def _assigned_none(self, name: str) -> bool:
        return any(_constant(v) is False for _, v in self.file.analysis.source.assignments.get(name, []) if v is not None)

    def _fixed(self, node: cst.Call, shuffle: cst.Arg, sampler: cst.Arg) -> cst.Call | None:
        """A sampler that always exists: drop ``shuffle=True``. One that may be None (the
        single-process run): ``shuffle=(sampler is None)``, so that run still shuffles."""
        value = sampler.value
        if isinstance(value, cst.Call) and not self._maybe_none(value):
            kept = [a for a in node.args if a is not shuffle]
            return node.with_changes(args=fix_commas([*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
        if of_types(value, cst.Call):
            return None  # evaluating it twice could do work twice
        text = code(value) if is_simple_reference(value) else f"({code(value)})"
        test = cst.parse_expression(f"({text} is None)")
        return node.with_changes(args=[a.with_changes(value=test) if a is shuffle else a for a in node.args])

    def _maybe_none(self, call: cst.Call) -> bool:
        """Any call but a torch sampler's constructor (a helper may return None)."""
        return not any(q.startswith("torch.utils.data.") for q in self.qualified(call))


def _constant(value: cst.BaseExpression) -> bool | None:
    """The truth of a literal shuffle / sampler value, None when it is no literal."""
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return value.value == "True"
    if isinstance(value, cst.Integer):
        return value.evaluated_value != 0
    return None
