"""DDP012 leaves alone what a rank says about its own failure: a print or a console logger's
line in an ``except`` handler, or in a context manager's ``__exit__`` under the test of the
exception its block raised (TorchSeg's ``Engine.__exit__``). Rank 0 may not have met it; only
the rank that did can tell. The same line outside such a branch is reported."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_ENGINE = """\
import logging

import torch.distributed as dist

logging.basicConfig(level=logging.INFO)  # a console handler on every rank
logger = logging.getLogger(__name__)


class Engine:
    def __enter__(self):
        dist.init_process_group("nccl")
        return self

    def __exit__(self, type, value, tb):
        {exit_body}
"""


@pytest.mark.parametrize(
    ("exit_body", "reported"),
    [
        ('if type is not None:\n            logger.info("an exception occurred, giving up")\n            return False', False),
        ('if type is not None:\n            print("an exception occurred, giving up")', False),
        ('try:\n            dist.destroy_process_group()\n        except RuntimeError:\n            logger.info("could not leave the group")', False),
        ('logger.info("leaving the engine")', True),
        ('if tb is None:\n            print("clean exit")', True),
    ],
)
def test_what_a_rank_says_about_its_own_failure(exit_body: str, reported: bool) -> None:
    findings = check_source(_ENGINE.format(exit_body=exit_body), rules=select_rules(["DDP012"])).findings
    assert bool(findings) is reported
