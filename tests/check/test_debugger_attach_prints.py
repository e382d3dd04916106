"""Issue 21 (ddp21k split A, BERT-NER's run_ner_crf.py, the Hugging Face example-script
template): ``print("Waiting for debugger attach")`` in the block that attaches a remote debugger
when ``--server_ip``/``--server_port`` are given is a developer's switch, off in a training run:
DDP012 does not report it. A print beside it that is not in that block still is."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch
import torch.distributed as dist

if args.server_ip and args.server_port:
    import {debugger}
    print("Waiting for debugger attach")
    {attach}
dist.init_process_group("nccl")
print("training starts")
"""


@pytest.mark.parametrize(
    ("debugger", "attach"),
    [
        ("ptvsd", "ptvsd.enable_attach(address=(args.server_ip, args.server_port), redirect_output=True)"),
        ("debugpy", "debugpy.listen((args.server_ip, args.server_port))"),
    ],
)
def test_a_print_in_the_debugger_attach_block_is_not_reported(debugger: str, attach: str) -> None:
    text = _SCRIPT.format(debugger=debugger, attach=attach)
    assert [f.line for f in check_source(text, rules=select_rules(["DDP012"])).findings] == [9]
