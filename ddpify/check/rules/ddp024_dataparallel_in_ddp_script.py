from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites

_DATA_PARALLEL_FUNCTION = "torch.nn.parallel.data_parallel"


class DataParallelInDdpScript(Rule):
    code = "DDP024"
    name = "dataparallel-in-ddp-script"
    message = "nn.DataParallel in a DDP script: DistributedDataParallel replaces it"
    severity = "warning"
    why = (
        "DataParallel is single-process multi-threaded replication: every forward scatters the batch "
        "from GPU 0 and gathers outputs back there, so GPU 0 does more work and holds more memory, "
        "and the GIL limits it; PyTorch's own DataParallel docstring recommends "
        "DistributedDataParallel 'even if there is only a single node'. Inside a DDP process it is "
        "worse: each of the N processes replicates onto every visible GPU, and a DataParallel model "
        "must not be wrapped in DDP. The fix removes it — `nn.DataParallel(model)` becomes `model` and "
        "`data_parallel(module, input)` becomes `module(input)` — with the converter's own rewrites; "
        "`model = nn.DataParallel(model)` is left as the harmless `model = model`. It is unsafe "
        "because code may rely on the wrapper (`model.module`, `device_ids`, `isinstance` tests)."
    )
    fix = "unsafe"
    valid = (
        """\
import torch.nn as nn
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
# unwrap DataParallel so the checkpoint loads into a plain model
state = ddpify.unwrap(model).state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
""",
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model.to(rank), device_ids=[rank])
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
import torch.nn as nn

model = nn.DataParallel(Net()).to(device)
""",
            """\
import torch.distributed as dist
import torch.nn as nn

model = Net().to(device)
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
import torch.nn as nn

output = nn.parallel.data_parallel(netG, noise, range(ngpu))
""",
            """\
import torch.distributed as dist
import torch.nn as nn

output = netG(noise)
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified(node)
        if qualified & names.DATAPARALLEL and node.args and not node.args[0].star:
            self.report(node, replacement=functools.partial(rewrites.without_dataparallel, node))
        elif _DATA_PARALLEL_FUNCTION in qualified and len(node.args) >= 2 and not any(a.star for a in node.args[:2]):
            self.report(
                node,
                "data_parallel(module, input) in a DDP script: DistributedDataParallel replaces it",
                replacement=functools.partial(rewrites.without_data_parallel_function, node),
            )
