from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.helpers import rank_guard
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites


class PrintOnEveryRank(Rule):
    code = "DDP012"
    name = "print-on-every-rank"
    message = "print/progress bar on every rank: N copies of every line"
    severity = "note"
    why = (
        "Each process prints, so logs repeat N times and tqdm bars overwrite one another "
        "(tqdm/tqdm#1294). Print on rank 0: `ddpify.print(...)`, and give progress bars "
        "`disable=not ddpify.is_main_process()`, as the converter does."
    )
    fix = "safe"
    valid = (
        """\
import torch.distributed as dist

if dist.get_rank() == 0:
    print("epoch done")
""",
        """\
import ddpify.runtime as ddpify
from tqdm import tqdm

ddpify.print("epoch done")
for batch in tqdm(loader, disable=not ddpify.is_main_process()):
    pass
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist

print("epoch done")
""",
            """\
import torch.distributed as dist
import ddpify.runtime as ddpify

ddpify.print("epoch done")
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from tqdm import tqdm

for batch in tqdm(loader):
    pass
""",
            """\
import torch.distributed as dist
from tqdm import tqdm
import ddpify.runtime as ddpify

for batch in tqdm(loader, disable=not ddpify.is_main_process()):
    pass
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified(node)
        if qualified & names.PRINT and rank_guard(self, node) is None:
            self.report(node, replacement=functools.partial(rewrites.rank_zero_print, node))
        elif qualified & names.TQDM and rank_guard(self, node) is None:
            quiet = rewrites.quiet_progress_bar(node)
            if quiet is not None:
                self.report(node, replacement=quiet)
