"""Issue 21 (ddp21k split A, BERT-NER-Pytorch): ``if args.local_rank not in [-1, 0] and not
evaluate:`` reads the truth of the function ``evaluate`` (a slip for a flag); it hands the
function to nobody, so ``evaluate`` still runs only where its calls run (under rank-0 tests),
and its prints are not every rank's. A name handed on (``callbacks=[evaluate]``, ``hook =
evaluate``, ``cb or evaluate``) still runs wherever that code sends it."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch.distributed as dist


def evaluate(model):
    print("evaluating")


def load(args):
    {mention}


def main(args, model):
    dist.init_process_group("nccl")
    load(args)
    if dist.get_rank() == 0:
        evaluate(model)
"""


@pytest.mark.parametrize(
    ("mention", "reported"),
    [
        ("if not evaluate:\n        dist.barrier()", False),
        ("cached = args.cache and not evaluate", False),
        ("if evaluate is None:\n        return", False),
        ("run(callbacks=[evaluate])", True),
        ("hook = args.hook or evaluate\n    hook(None)", True),
    ],
)
def test_a_truth_test_of_a_function_hands_it_to_nobody(mention: str, reported: bool) -> None:
    source = _SCRIPT.format(mention=mention)
    lines = [f.line for f in check_source(source, "train.py", rules=select_rules(["DDP012"])).findings]
    assert lines == ([5] if reported else [])
