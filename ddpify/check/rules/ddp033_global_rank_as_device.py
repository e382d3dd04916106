from __future__ import annotations

import libcst as cst

from ddpify.analysis.distributed_code import SET_DEVICE
from ddpify.analysis.ranks import Term
from ddpify.check.rule import Invalid, Rule, short
from ddpify.convert import names
from ddpify.tree.cstutil import is_simple_reference


class GlobalRankAsDevice(Rule):
    code = "DDP033"
    opt_in = "On one node rank and local rank coincide and the code works; only the launch command tells, which the script does not show."
    name = "global-rank-as-device"
    message = "the global rank used as a CUDA device index: on the second node it names a GPU that does not exist"
    severity = "error"
    why = (
        "A node has GPUs 0..k-1, but the global rank counts processes across all nodes, so on the "
        "second node of a 2 x 8 job rank 8 calls `torch.cuda.set_device(8)` and fails with "
        '"invalid device ordinal" (or, with fewer GPUs than ranks, two processes share one GPU). '
        "Index devices with the local rank: LOCAL_RANK, `dist.get_rank() % torch.cuda.device_count()`. "
        "Reported: `torch.cuda.set_device(rank)`, `.cuda(rank)`, `.to(rank)`, `device_ids=[rank]`, "
        '`torch.device("cuda", rank)` and `f"cuda:{rank}"` where `rank` is RANK, `dist.get_rank()` or '
        "a variable holding it. Not reported: the index of an `mp.spawn` worker, whatever its name "
        "(it counts the processes of this node), and a rank the function receives as a parameter "
        "(what the caller passes is not visible)."
    )
    fix_notes = "No automatic fix: the local rank is spelled differently in every script."
    false_positives = "A script that only runs on one node, where rank and local rank coincide (still fragile)."
    valid = (
        """\
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
""",
        """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
device = dist.get_rank() % torch.cuda.device_count()
model = model.to(device)
""",
        """\
import torch.distributed as dist
import torch.multiprocessing as mp


def demo(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = model.to(rank)  # the spawn index: this node's process number


if __name__ == "__main__":
    mp.spawn(demo, args=(2,), nprocs=2)
""",
    )
    invalid = (
        Invalid(
            """\
import os
import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
dist.init_process_group("nccl")
torch.cuda.set_device(rank)
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(model.cuda(dist.get_rank()), device_ids=[dist.get_rank()])
"""
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        for index in self._device_indices(node):
            if self._global_rank(index):
                self.report(
                    index,
                    f"`{short(index)}` is the global rank, used as a CUDA device index: on a multi-node run it names a GPU "
                    "the node does not have; use the local rank",
                )
                return

    def _device_indices(self, node: cst.Call) -> list[cst.BaseExpression]:
        found: list[cst.BaseExpression] = []
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        qualified = self.qualified(node)
        func = node.func
        if qualified & SET_DEVICE and positional:
            found.append(positional[0])
        elif qualified & names.TORCH_DEVICE:
            if len(positional) == 2:
                found.append(positional[1])
            elif positional:
                found.extend(_formatted(positional[0]))
        elif isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "to") and positional and not self._is_torch(func.value):
            found.extend(_formatted(positional[0]) if isinstance(positional[0], cst.FormattedString) else [positional[0]])
        for arg in node.args:
            if arg.keyword is None:
                continue
            if arg.keyword.value == "device_ids" and isinstance(arg.value, (cst.List, cst.Tuple)):
                found.extend(e.value for e in arg.value.elements)
            elif arg.keyword.value in ("output_device", "device"):
                found.extend(_formatted(arg.value) if isinstance(arg.value, cst.FormattedString) else [arg.value])
        return found

    def _global_rank(self, index: cst.BaseExpression) -> bool:
        if self.file.analysis.rank_tests.term(index) is not Term.GLOBAL_RANK:
            return False
        return not self._spawn_index(index) and not self._handed_in(index)

    def _handed_in(self, node: cst.BaseExpression) -> bool:
        """A parameter of the function (``def training_loop(rank=0, ...)``) that it never
        rebinds: which number the caller passes (often a spawn index on one node) is not visible."""
        if not isinstance(node, cst.Name):
            return False
        source = self.file.analysis.source
        function = source.enclosing_function(node)
        if function is None:
            return False
        names = [p.name.value for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)]
        if node.value not in names:
            return False
        rebinds = [s for s, _ in source.assignments.get(node.value, []) if source.enclosing_function(s) is function]
        return not rebinds

    def _spawn_index(self, node: cst.BaseExpression) -> bool:
        """The first parameter of an ``mp.spawn`` target (also ``args.rank = rank`` of it)."""
        source = self.file.analysis.source
        if not source.spawned or not is_simple_reference(node):
            return False
        function = source.enclosing_function(node)
        while function is not None:
            params = function.params.params
            if function in source.spawned and params and isinstance(node, cst.Name) and params[0].name.value == node.value:
                return True
            function = source.enclosing_function(function)
        return False

    def _is_torch(self, node: cst.BaseExpression) -> bool:
        return is_simple_reference(node) and any(q == "torch" or q.startswith("torch.") for q in self.qualified(node))


def _formatted(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The expressions of ``f"cuda:{rank}"``; nothing for other values."""
    if not isinstance(value, cst.FormattedString):
        return []
    return [part.expression for part in value.parts if isinstance(part, cst.FormattedStringExpression)]
