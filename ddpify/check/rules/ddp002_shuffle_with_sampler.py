from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names
from ddpify.convert.rewrites import fix_commas


class ShuffleWithSampler(Rule):
    code = "DDP002"
    name = "shuffle-with-sampler"
    message = "DataLoader gets both shuffle=True and a sampler: DataLoader raises 'sampler option is mutually exclusive with shuffle'"
    severity = "error"
    why = (
        "A sampler decides the order, so `DataLoader(shuffle=True, sampler=...)` raises at start-up "
        "(ultralytics/yolov3#231). With a DistributedSampler the shuffle belongs to the sampler "
        "(`DistributedSampler(dataset, shuffle=True)`, its default). The fix drops `shuffle=True`."
    )
    fix = "safe"
    valid = (
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=True), shuffle=False)
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
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & names.DATALOADER:
            return
        keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
        shuffle = keywords.get("shuffle")
        if shuffle is None or ("sampler" not in keywords and "batch_sampler" not in keywords):
            return
        if isinstance(shuffle.value, cst.Name) and shuffle.value.value == "False":
            return
        kept = [a for a in node.args if a is not shuffle]
        self.report(
            node, replacement=node.with_changes(args=fix_commas([*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
        )
