from __future__ import annotations

import functools

import libcst as cst

from ddpify.analysis.ranks import Branch
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import INIT_PROCESS_GROUP
from ddpify.check.wraps import is_ddp_wrap
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, of_types

_DATA_PARALLEL_FUNCTION = "torch.nn.parallel.data_parallel"


class DataParallelInDdpScript(Rule):
    code = "DDP024"
    default = True
    name = "dataparallel-in-ddp-script"
    message = "nn.DataParallel in a DDP script: DistributedDataParallel replaces it"
    severity = "warning"
    why = (
        "DataParallel is single-process multi-threaded replication: every forward scatters the batch "
        "from GPU 0 and gathers outputs back there, so GPU 0 does more work and holds more memory, "
        "and the GIL limits it; PyTorch's own DataParallel docstring recommends "
        "DistributedDataParallel 'even if there is only a single node'. Inside a DDP process it is "
        "worse: each of the N processes replicates onto every visible GPU, and a DataParallel model "
        "must not be wrapped in DDP. Not reported: DataParallel in the branch that runs without a "
        "process group (`else:` of `if args.distributed:`, `if RANK == -1 and device_count() > 1:`), "
        "a single-process fallback that never meets DDP; and DataParallel in one branch of an `if` "
        "(or conditional expression) on a flag that is no rank test whose other branch wraps in DDP "
        "(`if args.multiprocessing_distributed: DDP(...) else: DataParallel(...)`, `if use_ddp:`, "
        "`if args.world_size > 1:`): the script's own flag picks one wrapper per run; and "
        "DataParallel under a GPU count (`if args.n_gpu > 1:`) that the branch starting the process "
        "group sets to 1, every other setting of it being in the other branch of that `if` (the "
        "Hugging Face example scripts' `args.n_gpu = torch.cuda.device_count()` without a launcher, "
        "`args.n_gpu = 1` where `init_process_group` runs)."
    )
    fix = "unsafe"
    fix_notes = (
        "Where the DataParallel runs in the distributed branch only, the fix removes it: "
        "`nn.DataParallel(model)` becomes `model`, `data_parallel(module, input)` becomes "
        "`module(input)` (`model = nn.DataParallel(model)` is left as the harmless `model = model`). "
        "It is unsafe because code may rely on the wrapper (`model.module`, `device_ids`, `isinstance` "
        "tests). Elsewhere there is no fix: removing it would change what a single-process run does."
    )
    false_positives = "A fallback branch whose test the analysis cannot read as single-process (a config flag)."
    valid = (
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model.to(rank), device_ids=[rank])
""",
        """\
import os
import torch
import torch.distributed as dist

RANK = int(os.getenv("RANK", "-1"))
if RANK == -1 and torch.cuda.device_count() > 1:
    model = torch.nn.DataParallel(model)  # run without a launcher: the single-process fallback
if RANK != -1:
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[int(os.environ["LOCAL_RANK"])])
""",
        """\
import torch
import torch.distributed as dist

if args.distributed:
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
else:
    model = torch.nn.DataParallel(model).cuda()
""",
        """\
import torch

if args.local_rank == -1 or args.no_cuda:
    device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
    args.n_gpu = torch.cuda.device_count()
else:
    torch.cuda.set_device(args.local_rank)
    torch.distributed.init_process_group(backend="nccl")
    args.n_gpu = 1  # one GPU per process under the launcher
if args.n_gpu > 1:
    model = torch.nn.DataParallel(model)
if args.local_rank != -1:
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
""",
    )
    invalid = (
        Invalid(
            """\
import torch

torch.distributed.init_process_group(backend="nccl")
args.n_gpu = torch.cuda.device_count()  # every process counts every GPU of the node
if args.n_gpu > 1:
    model = torch.nn.DataParallel(model)
model = torch.nn.parallel.DistributedDataParallel(model)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
import torch.nn as nn

model = nn.DataParallel(Net()).to(device)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
import torch.nn as nn

if dist.is_initialized():
    output = nn.parallel.data_parallel(netG, noise, range(ngpu))
""",
            """\
import torch.distributed as dist
import torch.nn as nn

if dist.is_initialized():
    output = netG(noise)
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

if args.distributed:
    dist.init_process_group("nccl")
    model = torch.nn.DataParallel(model).cuda()
""",
            """\
import torch
import torch.distributed as dist

if args.distributed:
    dist.init_process_group("nccl")
    model = model.cuda()
""",
        ),
    )

    def _alternative_to_ddp(self, node: cst.Call) -> bool:
        """``if args.distributed: DDP(...) else: DataParallel(...)`` (or the conditional
        expression): the script's own flag, not a rank, chooses one wrapper per run, so the
        DataParallel branch is a run without DDP, whatever the flag is called."""
        child: cst.CSTNode = node
        for parent in self.ancestors(node):
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                other = parent.orelse if child is parent.body else parent.body
                if (
                    other is not None
                    and not self.file.analysis.rank_tests.is_rank_test(parent.test)
                    and any(is_ddp_wrap(self, call) for call in of_types(other, cst.Call))
                ):
                    return True
            if isinstance(parent, (cst.FunctionDef, cst.Module)):
                return False
            child = parent
        return False

    def _one_gpu_in_ddp(self, node: cst.Call) -> bool:
        """Under ``if args.n_gpu > 1:``, where every setting of ``args.n_gpu`` is ``1`` next to the
        ``init_process_group`` call or in the other branch of the ``if`` holding that call: in a
        run with a process group the count is 1, so the DataParallel never meets DDP."""
        guard = next((a for a in self.ancestors(node) if isinstance(a, cst.If)), None)
        test = guard.test if guard is not None else None
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.GreaterThan)
            and code(test.comparisons[0].comparator) == "1"
        ):
            return False
        settings = self.file.analysis.source.assignments.get(code(test.left), [])
        in_setup = [s for s, value in settings if value is not None and code(value) == "1" and self._starts_group(self._block(s))]
        return bool(in_setup) and all(s in in_setup or self._beside_setup(s) for s, _ in settings)

    def _block(self, statement: cst.CSTNode) -> cst.CSTNode | None:
        return next((a for a in self.ancestors(statement) if isinstance(a, (cst.IndentedBlock, cst.Module))), None)

    def _starts_group(self, block: cst.CSTNode | None) -> bool:
        return block is not None and any(self.qualified(c) & INIT_PROCESS_GROUP for c in of_types(block, cst.Call))

    def _beside_setup(self, statement: cst.CSTNode) -> bool:
        """``statement`` is in one branch of an ``if`` whose other branch starts the process group."""
        child: cst.CSTNode = statement
        for parent in self.ancestors(statement):
            if isinstance(parent, cst.If):
                other = parent.orelse if child is parent.body else parent.body if child is parent.orelse else None
                return self._starts_group(other)
            if isinstance(parent, (cst.FunctionDef, cst.Module)):
                return False
            child = parent
        return False

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified(node)
        dataparallel = bool(qualified & names.DATAPARALLEL and node.args and not node.args[0].star)
        function = _DATA_PARALLEL_FUNCTION in qualified and len(node.args) >= 2 and not any(a.star for a in node.args[:2])
        if not dataparallel and not function:
            return
        branch = self.file.analysis.context.branch(node)
        if branch is Branch.SINGLE_PROCESS or self._alternative_to_ddp(node) or self._one_gpu_in_ddp(node):
            return  # the fallback of a run without a process group: it never meets DDP
        fixable = branch is Branch.DISTRIBUTED
        if dataparallel:
            self.report(node, replacement=functools.partial(rewrites.without_dataparallel, node) if fixable else None)
        else:
            self.report(
                node,
                "data_parallel(module, input) in a DDP script: DistributedDataParallel replaces it",
                replacement=functools.partial(rewrites.without_data_parallel_function, node) if fixable else None,
            )
