from __future__ import annotations

import re

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import assignments
from ddpify.convert import names
from ddpify.tree.cstutil import code, has_binary_operator, of_types

_CPU_COUNT = frozenset(
    {
        "os.cpu_count",
        "os.sched_getaffinity",
        "os.process_cpu_count",
        "multiprocessing.cpu_count",
        "torch.multiprocessing.cpu_count",
        "psutil.cpu_count",
    }
)
# Already shared out between the processes of a node.
_PER_PROCESS = re.compile(r"world_size|local_world|nproc|ngpus|gpus_per_node|device_count|num_gpus|LOCAL_WORLD_SIZE", re.I)


class WorkersPerCpuCount(Rule):
    code = "DDP031"
    opt_in = "Whether the workers oversubscribe depends on the node's cores and processes per node, which the script does not show."
    name = "workers-per-cpu-count"
    message = "num_workers=os.cpu_count() in every process: N processes each start one worker per core"
    severity = "warning"
    why = (
        "Each DDP process builds its own DataLoader, so `num_workers=os.cpu_count()` starts "
        "cores × processes-per-node worker processes on the node: the CPUs are oversubscribed, "
        "every worker holds a copy of the dataset object, and data loading gets slower, not faster "
        "(often with 'too many open files' or shared-memory errors). Give each process its share: "
        '`os.cpu_count() // int(os.environ.get("LOCAL_WORLD_SIZE", 1))`, as pytorch/examples '
        "imagenet/main.py divides `workers` by the GPUs per node (Horovod likewise sets "
        "`torch.set_num_threads(1)`). Reported for a loader's num_workers taken from a CPU count "
        "(directly or through a variable) with no division by the processes per node. "
        "`ddpify.distributed_loader` caps num_workers at the process's share of the cores by itself."
    )
    fix_notes = "No automatic fix."
    false_positives = "A node that runs one process only."
    valid = (
        """\
import os
import ddpify.runtime as ddpify

workers = os.cpu_count() // int(os.environ.get("LOCAL_WORLD_SIZE", 1))
loader = ddpify.distributed_loader(train_set, batch_size=64, shuffle=True, num_workers=workers)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader

loader = DataLoader(train_set, batch_size=64, num_workers=4)
""",
        """\
import os
import ddpify.runtime as ddpify

loader = ddpify.distributed_loader(train_set, batch_size=64, num_workers=os.cpu_count())  # capped at run time
""",
    )
    invalid = (
        Invalid(
            """\
import os
import torch.distributed as dist
from torch.utils.data import DataLoader

workers = os.cpu_count()
loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=workers)
"""
        ),
        Invalid(
            """\
import multiprocessing
import torch.distributed as dist
from torch.utils.data import DataLoader

loader = DataLoader(train_set, batch_size=64, num_workers=multiprocessing.cpu_count())
"""
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._values: dict[str, list[cst.BaseExpression]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        for target, statements in assignments(self, node).items():
            self._values[target] = [s.value for s in statements]

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & names.DATALOADER:  # ddpify.distributed_loader caps it itself
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "num_workers":
                source = self._cpu_count_source(arg.value)
                if source is not None:
                    self.report(
                        arg,
                        f"num_workers={code(arg.value)} comes from {source} in every process: divide it by the processes per node (LOCAL_WORLD_SIZE)",
                    )

    def _cpu_count_source(self, value: cst.BaseExpression, depth: int = 0) -> str | None:
        if depth > 3 or _PER_PROCESS.search(code(value)) or has_binary_operator(value, cst.FloorDivide, cst.Divide, cst.RightShift):
            return None
        for call in of_types(value, cst.Call):
            if self.qualified(call) & _CPU_COUNT:
                return code(call)
        if isinstance(value, (cst.Name, cst.Attribute)):
            values = self._values.get(code(value), [])
            if len(values) == 1:  # a single, unconditional definition
                return self._cpu_count_source(values[0], depth + 1)
        return None
