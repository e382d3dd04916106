"""Issue 21: a ``--local_rank`` option the script sets from LOCAL_RANK after parsing, itself
(``args.local_rank = int(os.environ["LOCAL_RANK"])``) or in a helper of its project it calls
(rq-vae's ``dist.initialize(args)``, also two calls deep), holds torchrun's value: DDP016 is
quiet; a helper that only reads the option leaves it reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SETS = """\
import os

import torch.distributed as dist


def initialize(args):
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("nccl")
"""
_READS = """\
import torch.distributed as dist


def initialize(args):
    print(args.local_rank)
    dist.init_process_group("nccl")
"""
_SETUP = """\
from dist_utils import initialize


def setup(args):
    initialize(args)
    return args
"""
_SCRIPT = """\
import argparse

{imports}

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=-1, type=int)
args = parser.parse_args()
{call}
"""


@pytest.mark.parametrize(
    ("helper", "imports", "call", "reported"),
    [
        (_SETS, "from dist_utils import initialize", "initialize(args)", False),
        (_SETS, "from setup_utils import setup", "setup(args)", False),
        (_READS, "from dist_utils import initialize", "initialize(args)", True),
    ],
    ids=["helper-sets-it", "two-calls-deep", "helper-only-reads-it"],
)
def test_a_local_rank_option_set_from_the_environment_by_a_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: str, imports: str, call: str, reported: bool
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "dist_utils.py").write_text(helper)
    (tmp_path / "setup_utils.py").write_text(_SETUP)
    text = _SCRIPT.format(imports=imports, call=call)
    (tmp_path / "train.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    codes = [f.code for f in check_source(text, "train.py", rules=select_rules(["DDP016"])).findings]
    assert ("DDP016" in codes) is reported, codes
