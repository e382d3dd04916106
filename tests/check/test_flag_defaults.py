"""Issue 21: a rank helper with a mode parameter (open_clip's ``is_master(args, local=False)``,
``return is_local_master(args) if local else is_global_master(args)``). A call that leaves the
parameter at its default tests the global rank, so a save under it is once per job, no
"local-rank guard" (DDP006); a call that passes it names its own mode, and is judged by its
name only. Spellings: a conditional expression, ``if``/``return`` statements, a negated test,
a keyword-only parameter, the helper in the checked file itself and in a project module."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_HELPERS = """\
import torch.distributed as dist


def is_global_master(args):
    return args.rank == 0


def is_local_master(args):
    return args.local_rank == 0


def is_master(args, local=False):
    return is_local_master(args) if local else is_global_master(args)


def is_main(args, per_node=False):
    if per_node:
        return args.local_rank == 0
    return args.rank == 0


def is_chief(args, *, everywhere=None):
    return args.rank == 0 if not everywhere else args.local_rank == 0


def is_node_master(args, local=True):
    return is_local_master(args) if local else is_global_master(args)
"""

_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

{imports}


def main(args):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(2, 2))
    if {test}:
        torch.save(model.module.state_dict(), "model.pt")


if __name__ == "__main__":
    main(None)
"""


@pytest.mark.parametrize("where", ["project", "file"])
@pytest.mark.parametrize(
    ("test", "once_per_node"),
    [
        ("is_master(args)", False),
        ("is_main(args)", False),
        ("is_chief(args)", False),
        ("is_node_master(args)", True),  # its default is the local test
        ("is_local_master(args)", True),
        ("is_master(args, local=False) and args.rank == 0", False),
    ],
)
def test_a_mode_parameter_left_at_its_default_decides_the_rank_test(tmp_path: Path, where: str, test: str, once_per_node: bool) -> None:
    (tmp_path / "setup.py").touch()
    if where == "project":
        (tmp_path / "dist_utils.py").write_text(_HELPERS, encoding="utf-8")
        imports = "from dist_utils import is_chief, is_local_master, is_main, is_master, is_node_master"
    else:
        imports = _HELPERS.replace("import torch.distributed as dist\n", "")
    source = _SCRIPT.format(imports=imports, test=test)
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    found = {f.code for f in check_source(source, str(script), rules=select_rules(["DDP005", "DDP006"])).findings}
    assert ("DDP006" in found) is once_per_node, found
    assert "DDP005" not in found  # a rank test either way: the save is not made by every rank


def test_a_call_that_passes_the_mode_is_not_read_at_the_default(tmp_path: Path) -> None:
    """``is_main(args, per_node=True)`` asks for the local rank: the default's reading (global
    rank 0) does not hold for it, so no flag comes from the helper's returns; the name then
    decides (main: a rank-0 test), and DDP005 stays quiet."""
    (tmp_path / "setup.py").touch()
    (tmp_path / "dist_utils.py").write_text(_HELPERS, encoding="utf-8")
    for test in ("is_main(args, per_node=True)", "is_main(args, True)"):
        source = _SCRIPT.format(imports="from dist_utils import is_main", test=test)
        (tmp_path / "train.py").write_text(source, encoding="utf-8")
        found = {f.code for f in check_source(source, str(tmp_path / "train.py"), rules=select_rules(["DDP005"])).findings}
        assert "DDP005" not in found
