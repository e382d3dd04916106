"""``ddpify.mean_over_ranks``: with one process the value comes back as it is (the converted
script computes what the original did); under torchrun the e2e test of the plateau scheduler
(tests/e2e/test_run_time_choices.py) shows every rank getting the same mean."""

from __future__ import annotations

import torch

import ddpify.runtime as ddpify


def test_one_process_returns_the_value_itself() -> None:
    tensor = torch.tensor([1.5, 2.5])
    assert ddpify.mean_over_ranks(tensor) is tensor
    assert ddpify.mean_over_ranks(3) == 3 and ddpify.mean_over_ranks(0.25) == 0.25


def test_one_process_decides_on_its_own_value() -> None:
    """``ddpify.any_rank`` / ``ddpify.all_ranks``: with one process, the truth of the value (the
    original's ``if`` / ``while``); under torchrun the e2e test of a per-rank stop
    (tests/e2e/test_own_loss_loops.py) shows every rank leaving the loop together."""
    assert ddpify.any_rank(torch.tensor(2.0) > 1) is True and ddpify.any_rank(0) is False
    assert ddpify.all_ranks([1]) is True and ddpify.all_ranks("") is False
