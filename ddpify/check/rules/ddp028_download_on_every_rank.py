from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.check.calls import collective, every_call, is_true, keyword_value
from ddpify.check.places import guarded_by_context, scope_of, start
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import rewrites
from ddpify.tree.cstutil import callee_name

_FIRST = re.compile(r"main_process_first|rank_zero_first|zero_first|master_first|rank0_first|local_main_process_first", re.I)
_LOCAL_PATH = re.compile(r"""^[rRbBuU]?['"](\.{0,2}/|~|[A-Za-z]:\\)""")


class DownloadOnEveryRank(Rule):
    code = "DDP028"
    default = True
    name = "download-on-every-rank"
    message = "download on every rank at once: concurrent writes to the same files can corrupt the dataset or cache"
    severity = "warning"
    fix = "unsafe"
    why = (
        "Every process runs the script, so `datasets.CIFAR10(..., download=True)` starts N downloads "
        "into the same directory at the same time: torchvision's dataset downloads write the archive "
        "in place and extract it, so the processes overwrite each other's partial files and extract "
        "over each other, leaving a corrupt dataset that fails later or on the next run "
        "(pytorch/tutorials#3065 'corrupted dataset due to simultaneous downloading'; "
        "Lightning-AI/pytorch-lightning#17732). Download on one process first: rank 0 downloads "
        "while the others wait at a barrier, then they read the files in place (Accelerate's "
        "`main_process_first`, Fabric's `rank_zero_first`, `with ddpify.main_process_first():` in a "
        "converted script). Calls inside a rank guard, such a block, or after a barrier under a rank "
        "guard in the same function (the 'others wait while rank 0 downloads' idiom) are not reported, "
        "nor downloads in a function that rank-guarded code calls (the hand-written 'rank 0 downloads' "
        "idiom). `from_pretrained` and pretrained weights (`resnet50(pretrained=True)`) are not reported "
        "in hand-written code: the Hugging Face hub cache takes a lock per file and torch.hub writes a "
        "temporary file and renames it, so concurrent downloads waste bandwidth but corrupt nothing. In "
        "a script ddpify converted, a download the converter meant to run once (`from_pretrained` too) "
        "and that is no longer under `ddpify.main_process_first()` is reported."
    )
    fix_notes = "No fix in a hand-written script: the safe sequence needs barriers, which hang when the statement runs on only some ranks. In a script that already uses ddpify.runtime the unsafe fix puts the statement under `with ddpify.main_process_first():`."
    false_positives = "A dataset class whose own download writes atomically or takes a lock, given `download=True`."
    valid = (
        """\
import ddpify.runtime as ddpify
from torchvision import datasets

with ddpify.main_process_first():
    train_set = datasets.MNIST("data", train=True, download=True)
""",
        """\
import torch.distributed as dist
from torchvision import datasets

if dist.get_rank() == 0:
    datasets.CIFAR10("data", download=True)
dist.barrier()
train_set = datasets.CIFAR10("data", download=False)
""",
        """\
import torch.distributed as dist
from transformers import AutoModel

model = AutoModel.from_pretrained("./checkpoints/run1")
""",
        """\
import torch.distributed as dist
from transformers import AutoModel

dist.init_process_group("nccl")
model = AutoModel.from_pretrained("bert-base-uncased")  # the hub cache locks each file
""",
        """\
import torch.distributed as dist
from transformers import AutoModel

if args.local_rank not in [-1, 0]:
    dist.barrier()  # the others wait while rank 0 downloads
model = AutoModel.from_pretrained(args.model_name)
if args.local_rank == 0:
    dist.barrier()
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torchvision import datasets

train_set = datasets.CIFAR10(root="./data", train=True, download=True)
"""
        ),
        Invalid(
            """\
import ddpify.runtime as ddpify
from transformers import AutoTokenizer


def main():
    # the vocabulary comes from the hub
    tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
    return tokenizer
""",
            """\
import ddpify.runtime as ddpify
from transformers import AutoTokenizer


def main():
    # the vocabulary comes from the hub
    with ddpify.main_process_first():
        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
    return tokenizer
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torchvision import datasets

for batch in datasets.MNIST("data", train=False, download=True):
    pass
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torchvision import datasets
import ddpify.runtime as ddpify

train_set = datasets.CIFAR10(root="./data", train=True, download=True)
""",
            """\
import torch.distributed as dist
from torchvision import datasets
import ddpify.runtime as ddpify

with ddpify.main_process_first():
    train_set = datasets.CIFAR10(root="./data", train=True, download=True)
""",
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        # barriers under a rank guard, by scope: the "others wait while rank 0 downloads" idiom
        self._held_back: dict[cst.CSTNode, list[tuple[int, int]]] = {}
        self._fixed: set[cst.SimpleStatementLine] = set()

    def visit_Module(self, node: cst.Module) -> None:
        context = self.file.analysis.context
        for call in every_call(node):
            if collective(self, call) in ("dist.barrier", "ddpify.barrier") and context.local(call).selection.rank_dependent:
                self._held_back.setdefault(scope_of(self, call), []).append(start(self, call))

    def visit_Call(self, node: cst.Call) -> None:
        if is_true(keyword_value(node, "download")):
            what = "download=True"
        elif callee_name(node) == "from_pretrained" and isinstance(node.func, cst.Attribute) and self.file.already_converted:
            first = node.args[0].value if node.args and node.args[0].keyword is None else None
            if isinstance(first, cst.SimpleString) and _LOCAL_PATH.match(first.value):
                return
            what = "from_pretrained"
        else:
            return
        if not self.file.analysis.context.every_rank(node) or guarded_by_context(self, node, _FIRST):
            return
        where = start(self, node)
        if any(barrier < where for barrier in self._held_back.get(scope_of(self, node), [])):
            return
        if self._in_guarded_function(node):
            return
        message = f"{what} runs on every rank at once: concurrent downloads into one directory can corrupt it; wrap it in `with ddpify.main_process_first():`"
        statement = next((a for a in self.ancestors(node) if isinstance(a, cst.SimpleStatementLine)), None)
        if statement is not None and statement in self.file.facts.downloads:  # the converter's own choice
            if statement not in self._fixed:
                self._fixed.add(statement)
                self.report(
                    statement,
                    message,
                    replacement=functools.partial(rewrites.downloaded_once, statement) if self.file.already_converted else None,
                )
        else:
            self.report(node, message)

    def _in_guarded_function(self, node: cst.CSTNode) -> bool:
        """Inside a function that some rank-guarded code calls (``if rank == 0: prepare_data()``
        and later ``prepare_data()`` on every rank): the hand-written "rank 0 downloads first"
        idiom, and a barrier there would hang the others."""
        context = self.file.analysis.context
        source = self.file.analysis.source
        function = source.enclosing_function(node)
        while function is not None:
            if any(context.selection(site).rank_dependent for site in context.call_sites(function)):
                return True
            function = source.enclosing_function(function)
        return False
