"""Correct programs the runtime's guard rails once stopped, run for real (torchrun, 2 CPU
ranks, one launch): tests/runtime/scripts/ddp_correct_programs.py records what each rank saw."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.torchrun


@pytest.fixture
def runs(torchrun_results) -> list[dict]:
    return torchrun_results("ddp_correct_programs.py")


def test_nested_main_process_first_blocks_run_rank_0_first(runs):
    """The inner block (a download helper called inside a download block) used to meet the
    outer block's barrier of rank 1 at another site, and the site check stopped every rank."""
    for rec in runs:
        assert rec["inner_seen"] is True
        assert rec["outer_seen"] is True  # rank 1 started the outer block after rank 0 finished all of it


def test_a_save_under_a_name_each_rank_computed_passes(runs):
    """Rank 1 ran its "next free file name" loop after rank 0 wrote ckpt_0.pt."""
    assert [rec["saved_as"] for rec in runs] == ["ckpt_0.pt", "ckpt_1.pt"]
