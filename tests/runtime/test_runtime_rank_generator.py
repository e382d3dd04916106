"""ddpify.rank_generator(): each rank's own generator for random draws that pick training
batches (a converted get_batch()), and ddpify.rank_random() for numpy.random / random draws: None (the module itself) with one process, so the draw is the original one;
seeded with the base seed + rank, the same object on every call, so runs repeat."""

from __future__ import annotations

import random

import numpy as np
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


# ---------------------------------------------------------------- numpy.random / random


def test_rank_random_is_the_module_itself_with_one_process() -> None:
    assert ddpify.rank_random(np.random) is np.random
    assert ddpify.rank_random(random) is random
    np.random.seed(5)
    expected = np.random.choice(100, 4, replace=False)
    np.random.seed(5)
    assert (ddpify.rank_random(np.random).choice(100, 4, replace=False) == expected).all()


def test_each_rank_draws_its_own_numpy_and_random_batches_from_the_base_seed(as_rank) -> None:  # type: ignore[no-untyped-def]
    ddpify.seed(np.random.seed, 21)
    ddpify.seed(random.seed, 22)
    numpy_draws, random_draws = [], []
    for rank in (0, 1):
        as_rank(rank, 2)
        _seed._streams.clear()  # a fresh process per rank
        stream = ddpify.rank_random(np.random)
        assert stream is ddpify.rank_random(np.random), "one stream per process, not a reseed per call"
        numpy_draws.append(stream.choice(10**6, 8).tolist())
        assert numpy_draws[-1] == np.random.RandomState(21 + rank).choice(10**6, 8).tolist()
        random_draws.append(ddpify.rank_random(random).sample(range(10**6), 8))
        assert random_draws[-1] == random.Random(22 + rank).sample(range(10**6), 8)
    assert numpy_draws[0] != numpy_draws[1] and random_draws[0] != random_draws[1]


def test_when_training_evaluation_draws_agree_across_ranks(as_rank) -> None:  # type: ignore[no-untyped-def]
    """While gradients are off, ``when_training`` gives a stream (a generator) seeded alike on
    every rank: the evaluation draws agree, the training draws differ."""
    ddpify.seed(np.random.seed, 21)
    ddpify.seed(torch.manual_seed, 7)
    evaluation, training = [], []
    for rank in (0, 1):
        as_rank(rank, 2)
        _seed._streams.clear()  # a fresh process per rank
        _seed._generators.clear()
        with torch.no_grad():
            stream = ddpify.rank_random(np.random, when_training=True)
            generator = ddpify.rank_generator(when_training=True)
            evaluation.append((stream.choice(10**6, 8).tolist(), torch.randint(10**6, (8,), generator=generator).tolist()))
        training.append(ddpify.rank_random(np.random, when_training=True).choice(10**6, 8).tolist())
    assert evaluation[0] == evaluation[1]
    assert training[0] != training[1]


def test_the_first_training_draw_switches_the_seeded_rngs_to_seed_plus_rank(as_rank) -> None:  # type: ignore[no-untyped-def]
    """As a sharded loader's first batch does: the noise a training step draws from torch's
    own stream (a GAN's latent) differs per rank once batches are drawn per rank."""
    as_rank(1, 2)
    ddpify.seed(torch.manual_seed, 5)
    alike = torch.rand(3)
    ddpify.seed(torch.manual_seed, 5)
    with torch.no_grad():
        ddpify.rank_generator(when_training=True)  # an evaluation draw: no switch
    assert torch.equal(torch.rand(3), alike)
    ddpify.seed(torch.manual_seed, 5)
    ddpify.rank_generator()
    assert torch.equal(torch.rand(3), torch.rand(3, generator=torch.Generator().manual_seed(5 + 1)))
