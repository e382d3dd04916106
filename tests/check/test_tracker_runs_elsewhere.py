"""DDP013 through the project's own modules: a helper that starts a wandb run (mace's
``setup_wandb`` -> ``tools.init_wandb``), or a logger class whose ``__init__`` does
(torchdrug's ``core.WandbLogger``), opens one run per rank when the script calls it on every
rank. Not reported where the script calls it on rank 0, nor for a helper that starts the run
on rank 0 only or switches it off elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_TOOLS = """\
import torch.distributed as dist
import wandb


def init_wandb(project, name):
    wandb.init(project=project, name=name, resume="allow")


def setup_wandb(args):
    init_wandb(args.project, args.name)


def init_wandb_on_main(project):
    if dist.get_rank() == 0:
        wandb.init(project=project)


def init_wandb_switched(project, rank):
    wandb.init(project=project, mode="online" if rank == 0 else "disabled")


class WandbLogger:
    def __init__(self, project):
        self.run = wandb.init(project=project)

    def log(self, record):
        self.run.log(record)
"""
_SCRIPT = """\
import torch.distributed as dist
import tools

dist.init_process_group("nccl")
rank = dist.get_rank()
{call}
"""


@pytest.mark.parametrize(
    ("call", "found"),
    [
        ("tools.setup_wandb(args)", [6]),
        ("logger = tools.WandbLogger(args.project)", [6]),
        ("if rank == 0:\n    tools.setup_wandb(args)", []),
        ("tools.init_wandb_on_main(args.project)", []),
        ("tools.init_wandb_switched(args.project, rank)", []),
    ],
)
def test_a_project_helper_starting_a_wandb_run(tmp_path: Path, call: str, found: list[int]) -> None:
    (tmp_path / "tools.py").write_text(_TOOLS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(call=call), encoding="utf-8")
    findings = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP013"])).findings
    assert [f.line for f in findings] == found
    assert all("(another file) starts a wandb run" in f.message for f in findings)
