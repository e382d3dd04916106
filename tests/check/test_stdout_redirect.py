"""Issue 21: standard output sent to ``os.devnull`` (or anywhere) on the ranks other than the
main one silences their prints: ``sys.stdout = open(os.devnull, "w")`` under ``if local_rank !=
0``, chained with ``sys.stderr``, in a function called on those ranks, ``os.dup2(null,
sys.stdout.fileno())``, ``setattr(sys, "stdout", ...)``. The same redirect on every rank (a tee
logger) or on the main rank silences nothing."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import io
import os
import sys

import torch
import torch.distributed as dist


{helper}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
{redirect}
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    print("training")


if __name__ == "__main__":
    main()
"""

_SILENCE = """\
def silence():
    sys.stdout = open(os.devnull, "w")"""


@pytest.mark.parametrize(
    ("helper", "redirect", "silenced"),
    [
        ("", '    if int(os.environ["LOCAL_RANK"]) != 0:\n        f = open(os.devnull, "w")\n        sys.stdout = sys.stderr = f', True),
        ("", "    if rank > 0:\n        sys.stdout = io.StringIO()", True),
        ("", '    if rank != 0:\n        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())', True),
        ("", '    if rank != 0:\n        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)', True),
        ("", '    if rank != 0:\n        setattr(sys, "stdout", open(os.devnull, "w"))', True),
        (_SILENCE, "    if rank != 0:\n        silence()", True),
        ("", '    sys.stdout = open(f"log_{rank}.txt", "w")', False),  # every rank, its own file: still printed
        ("", '    if rank == 0:\n        sys.stdout = open("log.txt", "w")', False),  # main only
        (_SILENCE, "    silence()", False),
        ("", "    pass", False),
    ],
)
def test_stdout_sent_away_on_the_other_ranks_silences_their_prints(helper: str, redirect: str, silenced: bool) -> None:
    source = _SCRIPT.format(helper=helper, redirect=redirect)
    line = source.splitlines().index('    print("training")') + 1
    found = {f.line for f in check_source(source, "train.py", rules=select_rules(["DDP012"])).findings}
    assert (line in found) is not silenced
