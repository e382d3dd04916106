"""Issue 21: a checkpoint read back through a function of the project that drops the wrapper's
``module.`` prefix from the dict it returns (``fix_legacy_dict(torch.load(p))``): the saved
``module.`` keys are the project's format, so DDP007 stays silent; a helper that does not
touch the prefix leaves the finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data import {helper}


def main(args):
    model = torch.nn.Linear(2, 2)
    if args.pretrained:
        model.load_state_dict({helper}(torch.load(args.pretrained, map_location="cpu")))
    if args.distributed:
        dist.init_process_group("nccl")
        model = DDP(model)
    if not args.distributed or dist.get_rank() == 0:
        torch.save(model.state_dict(), "last.pt")
"""

_DATA = """\
def fix_legacy_dict(d):
    if "model" in d:
        d = d["model"]
    if "module." in list(d.keys())[0]:
        d = {k[7:]: v for k, v in d.items()}
    return d


def select_model(d):
    return d["model"] if "model" in d else d
"""


@pytest.mark.parametrize(("helper", "report"), [("fix_legacy_dict", False), ("select_model", True)])
def test_checkpoint_read_back_through_a_project_helper(tmp_path: Path, helper: str, report: bool) -> None:
    (tmp_path / "data.py").write_text(_DATA, encoding="utf-8")
    script = tmp_path / "main.py"
    script.write_text(_SCRIPT.format(helper=helper), encoding="utf-8")
    found = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP007"])).findings
    assert bool(found) is report
