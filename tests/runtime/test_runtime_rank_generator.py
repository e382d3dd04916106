"""ddpify.rank_generator(): each rank's own generator for random draws that pick training
batches (a converted get_batch()): None with one process, so the draw is the original one;
seeded with the base seed + rank, the same object on every call, so runs repeat."""

from __future__ import annotations

import torch

import ddpify.runtime as ddpify
from ddpify.runtime import _seed


def test_one_process_gets_none_and_the_draw_is_the_original() -> None:
    assert ddpify.rank_generator() is None
    torch.manual_seed(3)
    expected = torch.randint(100, (5,))
    torch.manual_seed(3)
    assert torch.equal(torch.randint(100, (5,), generator=ddpify.rank_generator()), expected)


def test_each_rank_draws_its_own_batches_from_the_base_seed(as_rank) -> None:  # type: ignore[no-untyped-def]
    ddpify.seed(torch.manual_seed, 7)
    draws = []
    for rank in (0, 1):
        as_rank(rank, 2)
        _seed._generators.clear()  # a fresh process per rank
        generator = ddpify.rank_generator()
        assert generator is ddpify.rank_generator(), "one generator per process, not a reseed per call"
        draws.append(torch.randint(10**6, (8,), generator=generator))
        expected = torch.randint(10**6, (8,), generator=torch.Generator().manual_seed(7 + rank))
        assert torch.equal(draws[-1], expected)
    assert not torch.equal(draws[0], draws[1])


def test_the_default_generator_is_left_alone(as_rank) -> None:  # type: ignore[no-untyped-def]
    as_rank(1, 2)
    torch.manual_seed(11)
    expected = torch.rand(3)
    torch.manual_seed(11)
    torch.randint(50, (4,), generator=ddpify.rank_generator())
    assert torch.equal(torch.rand(3), expected)
