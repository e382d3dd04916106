from __future__ import annotations

import functools

import libcst as cst

from ddpify.check.rule import Invalid, Rule, short
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, is_method_call, is_simple_reference, of_types

_WANDB = frozenset({"wandb.init", "wandb.log", "wandb.watch"})
_SWITCHES = frozenset({"mode", "disabled"})  # wandb.init(mode="disabled"), SummaryWriter has none
_MLFLOW_RUN = frozenset({"mlflow.start_run"})
# Without a start_run, these start a run of their own, once per process.
_MLFLOW_AUTOSTART = frozenset(
    {"mlflow.log_metric", "mlflow.log_metrics", "mlflow.log_param", "mlflow.log_params", "mlflow.log_artifact", "mlflow.log_artifacts"}
)


class LoggerOnEveryRank(Rule):
    code = "DDP013"
    default = True
    name = "logger-on-every-rank"
    message = "experiment logger created on every rank: N runs / N event files for one training"
    severity = "warning"
    why = (
        "Every process executes the script, so an unguarded `wandb.init()` opens N runs "
        '(huggingface/pytorch-image-models#1309 "--log-wandb creates multiple instances"), '
        "`SummaryWriter()` writes N event files that TensorBoard overlays, and `mlflow.start_run()` "
        "records N runs (metatensor/metatrain#733); `wandb.log` on a rank whose `wandb.init` was "
        "guarded raises. Log from rank 0 only. Calls under a "
        "rank test (`if rank == 0:`, `... if is_main_process() else None`) or switched off by the rank "
        '(`wandb.init(mode="online" if rank == 0 else "disabled")`) are fine. A call of a project helper that '
        "starts a wandb run wherever it runs (mace's `setup_wandb(args)`, a `WandbLogger` class whose "
        "`__init__` calls `wandb.init`) is reported where this file calls it on every rank."
    )
    fix = "safe"
    fix_notes = "No fix in a hand-written script: guarding the factory would leave the other ranks without the object the rest of the code uses. In a script that already uses ddpify.runtime the fix writes `ddpify.rank_zero(SummaryWriter)(...)`, which hands the other ranks a no-op object."
    false_positives = "A logger switched off on the other ranks by code of another module."
    valid = (
        """\
import torch.distributed as dist
import wandb

dist.init_process_group("nccl")
wandb_mode = "online" if dist.get_rank() == 0 else "disabled"
wandb.init(project="toy", mode=wandb_mode)
for step in range(10):
    wandb.log({"step": step})  # a disabled run on every rank but 0: nothing logged there
""",
        """\
import os

import torch.distributed as dist
import wandb


class Experiment:
    def __init__(self, conf):
        self._use_wandb = conf.use_wandb
        dist.init_process_group("nccl")
        if int(os.environ["RANK"]) not in [0, -1]:
            self._use_wandb = False  # cleared on the other ranks: true on rank 0 at most

    def start_training(self):
        if self._use_wandb:
            wandb.init(project="se3")
""",
        """\
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter("runs") if dist.get_rank() == 0 else None
""",
        """\
import wandb
import ddpify.runtime as ddpify
from torch.utils.tensorboard import SummaryWriter

ddpify.rank_zero(wandb.init)(project="toy")
writer = ddpify.rank_zero(SummaryWriter)(log_dir="runs/toy")
ddpify.rank_zero(wandb.log)({"loss": 0.1})
""",
        """\
import mlflow
import torch.distributed as dist

if dist.get_rank() == 0:
    mlflow.start_run()
""",
        """\
import torch.distributed as dist
import wandb

wandb.init(project="toy", mode="online" if dist.get_rank() == 0 else "disabled")
""",
        """\
import os
import torch.distributed as dist
import wandb
from torch.utils.tensorboard import SummaryWriter


def train(args):
    if int(os.environ["RANK"]) != 0:
        return train_quietly(args)
    wandb.init(project="toy")  # the early exit left rank 0 only
    writer = SummaryWriter("runs")
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter(log_dir="runs/exp")
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
import wandb

wandb.init(project="toy")
for step in range(10):
    wandb.log({"step": step})
"""
        ),
        Invalid(
            """\
import os

import torch.distributed as dist
import wandb


class Experiment:
    def __init__(self, conf):
        if int(os.environ["RANK"]) != 0:
            self._use_wandb = False
        self._use_wandb = conf.use_wandb  # set after the clearing: true on every rank again

    def start_training(self):
        if self._use_wandb:
            wandb.init(project="se3")
"""
        ),
        Invalid(
            """\
import mlflow
import torch.distributed as dist

with mlflow.start_run():
    mlflow.log_metric("loss", 0.1)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter
import ddpify.runtime as ddpify

writer = SummaryWriter(log_dir="runs/exp")
""",
            """\
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter
import ddpify.runtime as ddpify

writer = ddpify.rank_zero(SummaryWriter)(log_dir="runs/exp")
""",
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._mlflow_run = False

    def visit_Module(self, node: cst.Module) -> None:
        self._mlflow_run = any(
            is_method_call(call, "start_run") and self.qualified(call) & _MLFLOW_RUN for call in of_types(node, cst.Call)
        )

    def visit_Call(self, node: cst.Call) -> None:
        if self._starts_run_elsewhere(node) and self.file.analysis.context.every_rank(node):
            self.report(
                node, message=f"{short(node.func)}() (another file) starts a wandb run, and runs on every rank: N runs for one training"
            )
            return
        what = self._logger(node)
        if what is None or not self.file.analysis.context.every_rank(node):
            return
        if self._switched_by_rank(node):
            return  # wandb.init(mode="online" if rank == 0 else "disabled")
        if "wandb" in what and "init" not in what and self._wandb_inits and all(self._switched_by_rank(c) for c in self._wandb_inits):
            return  # wandb.log(...) of a run every rank but 0 started disabled: a no-op there
        if what.startswith("mlflow"):
            self.report(node, message=f"{what} runs on every rank: N mlflow runs for one training; call it on rank 0 only")
            return
        self.report(
            node,
            message=f"{what} runs on every rank: N {'runs' if 'wandb' in what else 'event files'} for one training",
            replacement=functools.partial(rewrites.rank_zero_factory, node) if self.file.already_converted else None,
        )

    def _starts_run_elsewhere(self, call: cst.Call) -> bool:
        """A project helper that starts a tracker run (``Helper.starts_run``): mace's
        ``setup_wandb(args)``, torchdrug's ``core.WandbLogger(...)`` built."""
        project = self.file.analysis.source.project
        helper = project.helper(call)
        if helper is None and is_simple_reference(call.func):
            helper = project.named(f"{code(call.func)}.__init__")
        return helper is not None and helper.starts_run

    def _switched_by_rank(self, call: cst.Call) -> bool:
        """``mode=`` / ``disabled=`` decided by the rank: in the argument, or in the one value
        of the variable it passes (RoMa's ``wandb_mode = "online" if ... rank == 0 else
        "disabled"``)."""
        rank_tests, source = self.file.analysis.rank_tests, self.file.analysis.source
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value not in _SWITCHES:
                continue
            values = [v for _, v in source.assignments.get(arg.value.value, [])] if isinstance(arg.value, cst.Name) else []
            if rank_tests.depends_on_rank(arg.value) or (values and all(v is not None and rank_tests.depends_on_rank(v) for v in values)):
                return True
        return False

    @functools.cached_property
    def _wandb_inits(self) -> list[cst.Call]:
        calls = self.file.analysis.source.calls_by_callee.get("init", [])
        return [c for c in calls if "wandb.init" in self.qualified(c)]

    def _logger(self, node: cst.Call) -> str | None:
        qualified = self.qualified(node)
        if qualified & names.SUMMARY_WRITERS:
            return "SummaryWriter(...)"
        hit = qualified & _WANDB
        if hit:
            return f"{min(hit)}(...)"
        if qualified & _MLFLOW_RUN:
            return "mlflow.start_run()"
        if not self._mlflow_run and qualified & _MLFLOW_AUTOSTART:
            return f"{min(qualified & _MLFLOW_AUTOSTART)}(...)"
        return None
