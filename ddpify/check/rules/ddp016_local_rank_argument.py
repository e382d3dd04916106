from __future__ import annotations

import libcst as cst

from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, is_method_call

_LAUNCH = "torch.distributed.launch"


class LocalRankArgument(Rule):
    code = "DDP016"
    name = "local-rank-argument"
    message = "--local_rank command-line argument: torchrun passes LOCAL_RANK in the environment, not as an argument"
    severity = "error"
    why = (
        "`torch.distributed.launch` used to pass `--local_rank=N` to every process; it is "
        "deprecated, and since torch 2.0 it passes `--local-rank=N` (dash) instead, so a parser "
        'that only knows `--local_rank` stops with "unrecognized arguments: --local-rank=0" '
        "(huggingface/pytorch-image-models#1728). Its successor `torchrun` passes nothing at all: "
        "the local rank is in the LOCAL_RANK environment variable, so `args.local_rank` keeps its "
        "default (-1) and the script believes it is not distributed, or puts every rank on the same "
        "GPU. The fix accepts both spellings and makes the default read LOCAL_RANK under a launcher "
        "(`default=ddpify.local_rank_argument(-1)`), exactly as the converter does, so the script "
        "works under torchrun, the old launcher and as a single process. Strings that tell users "
        "to start the script with `python -m torch.distributed.launch` are reported too (use "
        "`torchrun --nproc_per_node=N`), without a fix, except in scripts that use ddpify.runtime, "
        "whose converted `--local_rank` argument works under either launcher."
    )
    fix = "safe"
    valid = (
        """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()
local_rank = int(os.environ["LOCAL_RANK"])
""",
        """\
import argparse
import ddpify.runtime as ddpify

parser = argparse.ArgumentParser()
# filled in by torch.distributed.launch; unused on a single GPU
parser.add_argument("--local_rank", "--local-rank", type=int, default=ddpify.local_rank_argument(-1))
""",
        '''\
"""Also runs as: python -m torch.distributed.launch --nproc_per_node=2 train.py"""
import argparse
import ddpify.runtime as ddpify

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", "--local-rank", type=int, default=ddpify.local_rank_argument(-1))
''',
    )
    invalid = (
        Invalid(
            """\
import argparse
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
""",
            """\
import argparse
import torch.distributed as dist
import ddpify.runtime as ddpify

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", "--local-rank", type=int, default=ddpify.local_rank_argument(-1))
""",
        ),
        Invalid(
            '''\
"""Train on 4 GPUs: python -m torch.distributed.launch --nproc_per_node=4 train.py"""
import torch.distributed as dist
'''
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not is_method_call(node, "add_argument") or not node.args:
            return
        fixed = rewrites.local_rank_argument(node)
        if fixed is None:
            return
        spelled = [
            a.value.evaluated_value
            for a in node.args
            if a.keyword is None and isinstance(a.value, cst.SimpleString) and a.value.evaluated_value in names.LOCAL_RANK_FLAGS
        ]
        default = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "default"), None)
        if "--local-rank" in spelled and default is not None and "LOCAL_RANK" in code(default):
            return  # torch>=2 launch spelling, and torchrun's environment as the default: both work
        self.report(
            node,
            message=f"{' / '.join(spelled)} command-line argument: torchrun passes LOCAL_RANK in the environment, not as an argument, and torch>=2 launch passes --local-rank",
            replacement=fixed,
        )

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.file.already_converted:
            return  # its --local_rank argument accepts both launchers: the mention is harmless
        try:
            text = str(node.evaluated_value)
        except Exception:  # noqa: BLE001 - an undecodable literal is not ours to judge
            return
        if _LAUNCH in text:
            self.report(
                node,
                message="torch.distributed.launch is deprecated (and passes --local-rank since torch 2.0): launch with torchrun, which passes LOCAL_RANK in the environment",
            )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is None or node.relative or self.file.already_converted:
            return
        base = code(node.module)
        imported = [] if isinstance(node.names, cst.ImportStar) else [f"{base}.{code(a.name)}" for a in node.names]
        if base == _LAUNCH or base.startswith(_LAUNCH + ".") or _LAUNCH in imported:
            self.report(node, message="torch.distributed.launch is deprecated: launch with torchrun (torch.distributed.run)")

    def visit_Import(self, node: cst.Import) -> None:
        if self.file.already_converted:
            return
        if any(code(a.name) == _LAUNCH or code(a.name).startswith(_LAUNCH + ".") for a in node.names):
            self.report(node, message="torch.distributed.launch is deprecated: launch with torchrun (torch.distributed.run)")
