"""Correct programs the runtime once stopped or let diverge, and the guard rail for parameters
without a gradient, run for real (torchrun, 2 CPU
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


def test_parameters_set_in_the_first_forward_agree_on_every_rank(runs):
    """ActNorm initialises from each rank's own first batch; rank 0's values are adopted."""
    first, second = (rec["actnorm_params"] for rec in runs)
    assert first == second


def test_parameters_set_around_the_wrapper_agree_on_every_rank(runs):
    """Glow initialises ActNorm with ``model.module(x)`` under no_grad before training: the
    first training forward finds the ranks disagreeing and adopts rank 0's values."""
    first, second = (rec["actnorm_bypass_params"] for rec in runs)
    assert first == second


def test_parameters_without_a_gradient_stop_at_the_first_backward_with_the_fix(runs):
    for rec in runs:
        assert rec["declared_steps"] == 2  # find_unused_parameters=True: trains
        kind, message = rec["unused_error"]
        assert kind == "GuardError", message
        assert "the first backward through TwoHeads (wrapped by ddpify.prepare_model at ddp_correct_programs.py:" in message
        assert "gave no gradient to 2 parameter(s) that require one: aux.weight, aux.bias." in message
        assert "wrap with find_unused_parameters=True at ddp_correct_programs.py:" in message
