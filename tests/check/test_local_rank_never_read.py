"""DDP016 on a ``--local_rank`` option that nothing reads (U2PL's train_semi.py takes the
device from LOCAL_RANK): torchrun's run ignores it, so it is reported only where a strict
``parse_args()`` would stop at torch>=2's ``--local-rank`` from the old launcher; a lenient
parse is left alone. A project module the script imports that names ``.local_rank`` may be
handed the options and read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import argparse
import os

import torch.distributed as dist
{imports}

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.{parse}()
local_rank = int(os.environ["LOCAL_RANK"])
{call}
"""


@pytest.mark.parametrize(
    ("parse", "helper", "message"),
    [
        ("parse_args", "", "never read, but the strict parse_args() knows no --local-rank"),
        ("parse_known_args", "", None),
        ("parse_known_args", "def setup(args):\n    return args.local_rank\n", "torchrun passes LOCAL_RANK in the environment"),
        ("parse_args", "def setup(args):\n    return args.epochs\n", "never read, but the strict parse_args()"),
    ],
)
def test_an_option_nothing_reads(tmp_path: Path, parse: str, helper: str, message: str | None) -> None:
    (tmp_path / "utils.py").write_text(helper or "def setup(args):\n    pass\n", encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(imports="from utils import setup", parse=parse, call="setup(args)"), encoding="utf-8")
    findings = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP016"])).findings
    assert [f.line for f in findings] == ([8] if message else [])
    assert all(message and message in f.message for f in findings)
