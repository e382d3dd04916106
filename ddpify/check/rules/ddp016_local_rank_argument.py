from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.analysis.launch_args import LOCAL_RANK_FLAGS, from_local_rank_variable, local_rank_flags, works_under_torchrun
from ddpify.check import fixes
from ddpify.check.rule import Import, Invalid, Rule
from ddpify.convert import rewrites
from ddpify.tree.cstutil import code, is_simple_reference

_LAUNCH = "torch.distributed.launch"
_VERSION = re.compile(r"version", re.I)


def _plain_local_rank_argument(call: cst.Call, os_name: str) -> cst.Call | None:
    """Both spellings, and LOCAL_RANK from the environment as the default (argparse converts a
    string default with ``type=``; the original default stays for a run without a launcher)."""
    flags = [a for a in call.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    spelled = {a.value.evaluated_value for a in flags if isinstance(a.value, cst.SimpleString)}
    args = list(call.args)
    insert_at = max(args.index(a) for a in flags) + 1
    for flag in [f for f in LOCAL_RANK_FLAGS if f not in spelled]:
        args.insert(insert_at, cst.Arg(cst.SimpleString(f'"{flag}"')))
    typed = any(a.keyword is not None and a.keyword.value == "type" and code(a.value) == "int" for a in args)
    index = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "default"), None)
    original = args[index].value if index is not None else cst.Name("None")
    if "LOCAL_RANK" not in code(original):
        if typed:
            value = f'{os_name}.environ.get("LOCAL_RANK", {code(original)})'
        elif isinstance(original, cst.Integer) or (
            isinstance(original, cst.UnaryOperation) and isinstance(original.expression, cst.Integer)
        ):
            value = f'int({os_name}.environ.get("LOCAL_RANK", {code(original)}))'
        else:
            return None
        if index is None:
            args.append(rewrites.keyword("default", cst.parse_expression(value)))
        else:
            args[index] = args[index].with_changes(value=cst.parse_expression(value))
    return call.with_changes(args=rewrites.fix_commas(args))


class LocalRankArgument(Rule):
    code = "DDP016"
    default = True
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
        "GPU. Accept both spellings and default to LOCAL_RANK. Not reported: an argument declared "
        "only for the torch version whose launcher passes it (`if PYTORCH_MAJOR_VERSION == 1:`), "
        "and one that already has both spellings and reads LOCAL_RANK, and one the file never reads (no `.local_rank`, "
        "here or in the project modules it imports) where the options are parsed leniently (`parse_known_args()`): "
        "torchrun's run ignores it, and so does the old launcher's. Strings that tell users "
        "to start the script with `python -m torch.distributed.launch` are reported too where the "
        "script parses its options strictly (`parse_args()`) without a `--local-rank` option, as that "
        "launcher's `--local-rank` stops it (use `torchrun --nproc_per_node=N`), except in scripts that use ddpify.runtime, whose converted "
        "`--local_rank` argument works under either launcher. An option declared by a function or "
        "class of the project's modules (`gpu.add_gpu_params(parser)`, `Options()`) is reported at "
        "that call when this file reads `.local_rank` (no fix: the declaration is in the other file). Not reported "
        "either: an option the file sets from the environment afterwards (`args.local_rank = "
        'int(os.environ["LOCAL_RANK"])`, also in a helper of its project it calls), which holds the real local rank under torchrun.'
    )
    fix = "safe"
    fix_notes = (
        'The fix adds the missing spelling (`"--local_rank", "--local-rank"`) and makes the default '
        'read the environment: `default=os.environ.get("LOCAL_RANK", -1)` with `type=int` (argparse '
        "converts a string default), `int(os.environ.get(...))` without it; the original default stays "
        "for a run without a launcher, so a single-process run does what it did. `import os` is added "
        "if missing. Mentions of the old launcher get no fix."
    )
    false_positives = (
        "A dead compatibility argument in a script that reads LOCAL_RANK itself and documents "
        "torchrun: only the deprecated launcher on torch 2 would trip over it (noise)."
    )
    valid = (
        """\
import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
args.local_rank = local_rank  # torchrun's value replaces the option's
torch.cuda.set_device(args.local_rank)
""",
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
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", "--local-rank", type=int, default=os.environ.get("LOCAL_RANK", -1))
""",
        """\
import argparse
import os
import torch
import torch.distributed as dist

PYTORCH_MAJOR_VERSION = int(torch.__version__.split(".")[0])
parser = argparse.ArgumentParser()
if PYTORCH_MAJOR_VERSION == 1:
    parser.add_argument("--local_rank", type=int, required=True)  # torch 1.x launch passes it
args, _ = parser.parse_known_args()
local_rank = args.local_rank if PYTORCH_MAJOR_VERSION == 1 else int(os.environ["LOCAL_RANK"])
""",
        '''\
"""Train on 4 GPUs: python -m torch.distributed.launch --nproc_per_node=4 train.py"""
import os
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])  # no command-line options: the launcher's --local-rank is ignored
''',
        """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
if "LOCAL_RANK" in os.environ:
    args.local_rank = int(os.environ["LOCAL_RANK"])  # torchrun's value wins
""",
        '''\
"""Also runs as: python -m torch.distributed.launch --nproc_per_node=2 train.py"""
import argparse
import ddpify.runtime as ddpify

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", "--local-rank", type=int, default=ddpify.local_rank_argument(-1))
''',
        """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)  # kept for the old launcher, never read
args = parser.parse_known_args()[0]
local_rank = int(os.environ["LOCAL_RANK"])
""",
    )
    invalid = (
        Invalid(
            """\
import argparse
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
local_rank = parser.parse_args().local_rank
""",
            """\
import argparse
import torch.distributed as dist
import os

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", "--local-rank", type=int, default=os.environ.get("LOCAL_RANK", -1))
local_rank = parser.parse_args().local_rank
""",
        ),
        Invalid(
            """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=0)
local_rank = parser.parse_args().local_rank
""",
            """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", "--local-rank", default=int(os.environ.get("LOCAL_RANK", 0)))
local_rank = parser.parse_args().local_rank
""",
        ),
        Invalid(
            '''\
"""Train on 4 GPUs: python -m torch.distributed.launch --nproc_per_node=4 train.py"""
import argparse
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=90)
args = parser.parse_args()
'''
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        spelled = local_rank_flags(node)
        if not spelled:
            self._declared_elsewhere(node)
            return
        if works_under_torchrun(node):
            return  # torch>=2 launch spelling, and torchrun's environment as the default: both work
        if self._version_gated(node):
            return  # declared for the torch version whose launcher passes it; LOCAL_RANK on the others
        if self._replaced_from_environment:
            return  # args.local_rank = int(os.environ["LOCAL_RANK"]): torchrun's value wins
        unread = not self._reads_local_rank and not self.file.already_converted
        if unread and not self._rejects_local_rank:
            return  # declared for the old launcher and never read: torchrun's run ignores it
        if self.file.already_converted:
            replacement = rewrites.local_rank_argument(node)
            imports: tuple[Import, ...] = ()
            if replacement is None:
                return  # ddpify.local_rank_argument(...) reads LOCAL_RANK under either launcher
        else:
            os_name, imports = fixes.reference(self.file, "os")
            replacement = _plain_local_rank_argument(node, os_name)
        because = (
            " is never read, but the strict parse_args() knows no --local-rank, which torch>=2's torch.distributed.launch passes: "
            "the run stops there (launch with torchrun, or accept both spellings)"
            if unread
            else ": torchrun passes LOCAL_RANK in the environment, not as an argument, and torch>=2 launch passes --local-rank"
        )
        self.report(
            node,
            message=f"{' / '.join(spelled)} command-line argument{because}",
            replacement=replacement,
            imports=imports if replacement is not None else (),
        )

    def _declared_elsewhere(self, node: cst.Call) -> None:
        """``gpu.add_gpu_params(parser)``, ``Options()``: a function or class of the project's
        modules declares the option (``Helper.declares_local_rank``), and this file reads
        ``.local_rank``: under torchrun it keeps its default here."""
        if not is_simple_reference(node.func) or not self._reads_local_rank:
            return
        helper = self.file.analysis.source.project_call(node)
        if helper is not None and helper.declares_local_rank:
            self.report(
                node,
                message=f"{code(node.func)}() (another file) declares a --local_rank command-line argument that this file reads: "
                "torchrun passes LOCAL_RANK in the environment, not as an argument, so it keeps its default under torchrun",
            )

    @functools.cached_property
    def _rejects_local_rank(self) -> bool:
        """The file parses its command line strictly (``parser.parse_args()``) and declares no
        ``--local-rank`` option: torch>=2's ``torch.distributed.launch`` passes one, and the run
        stops. A script that parses no options, or ``parse_known_args()``, runs either way."""
        calls = self.file.analysis.source.of_types(cst.Call)
        strict = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "parse_args" for c in calls)
        return strict and not any("--local-rank" in local_rank_flags(c) for c in calls)

    @functools.cached_property
    def _replaced_from_environment(self) -> bool:
        """The parsed option is set from the environment afterwards (``args.local_rank =
        int(os.environ["LOCAL_RANK"])``, also under ``if "LOCAL_RANK" in os.environ:``): under
        torchrun it holds the real local rank, and the argument only serves the old launcher."""
        source = self.file.analysis.source
        for assign in source.of_types(cst.Assign):
            assert isinstance(assign, cst.Assign)
            targets = [t.target for t in assign.targets]
            if any(isinstance(t, cst.Attribute) and t.attr.value == "local_rank" for t in targets) and from_local_rank_variable(
                source, assign.value
            ):
                return True
        helpers = (source.project.helper(c) for c in source.of_types(cst.Call) if isinstance(c, cst.Call))
        return any(h is not None and h.replaces_local_rank for h in helpers)  # dist.initialize(args) sets it so

    @functools.cached_property
    def _reads_local_rank(self) -> bool:
        """This file reads a ``.local_rank``, or a project module it imports (and may hand its
        options to) names one."""
        source = self.file.analysis.source
        return any(isinstance(a, cst.Attribute) and a.attr.value == "local_rank" for a in source.of_types(cst.Attribute)) or (
            source.project.imports_mention(".local_rank")
        )

    def _version_gated(self, node: cst.Call) -> bool:
        """Under ``if PYTORCH_MAJOR_VERSION == 1:`` / ``if torch.__version__ < "2":``."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
            if isinstance(ancestor, cst.If) and _VERSION.search(code(ancestor.test)):
                return True
        return False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.file.already_converted:
            return  # its --local_rank argument accepts both launchers: the mention is harmless
        try:
            text = str(node.evaluated_value)
        except Exception:  # noqa: BLE001 - an undecodable literal is not ours to judge
            return
        if _LAUNCH in text and self._rejects_local_rank:
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
