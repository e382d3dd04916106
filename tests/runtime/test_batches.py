"""A project's own batch iterator, sharded by cutting each batch across the ranks
(``ddpify.runtime._batches``): the same cut for every part of a batch, the parts of all ranks
disjoint and together the whole batch; a batch that cannot be cut goes whole to every rank."""

from __future__ import annotations

import warnings
from collections import namedtuple

import torch

from ddpify.runtime import _batches
from ddpify.runtime._batches import ShardedBatches, split_batch

Pair = namedtuple("Pair", ["x", "y"])


def _parts(batch, world=2):
    return [split_batch(batch, world, rank) for rank in range(world)]


def test_every_part_is_cut_the_same_way() -> None:
    x, y, ids = torch.arange(10).view(5, 2), torch.arange(5), torch.arange(5)
    batch = ((x, ids), {"y": y, "text": ["a", "b", "c", "d", "e"], "scale": torch.tensor(2.0)})
    first, second = _parts(batch)
    assert first[0][1].tolist() == [0, 1] and second[0][1].tolist() == [2, 3, 4]
    assert first[0][0].tolist() == [[0, 1], [2, 3]] and first[1]["y"].tolist() == [0, 1]
    assert first[1]["text"] == ["a", "b"] and second[1]["text"] == ["c", "d", "e"]
    assert first[1]["scale"].item() == 2.0  # a scalar belongs to every part


def test_namedtuples_and_three_ranks_cover_the_batch() -> None:
    batch = Pair(torch.arange(9), torch.arange(9) * 10)
    parts = _parts(batch, world=3)
    assert all(isinstance(p, Pair) for p in parts)
    assert [i for p in parts for i in p.x.tolist()] == list(range(9))
    assert [p.y.tolist() for p in parts][2] == [60, 70, 80]


def test_a_batch_that_cannot_be_cut_goes_whole_to_every_rank() -> None:
    short = (torch.arange(1), torch.arange(1))
    assert all(p is short for p in _parts(short))  # fewer rows than ranks
    uneven = (torch.arange(4), torch.arange(6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _batches._warned.clear()
        assert all(p is uneven for p in _parts(uneven))
    assert any("different numbers of rows" in str(w.message) for w in caught)


def test_one_process_iterates_the_batches_as_they_are() -> None:
    batches = [(torch.arange(4), torch.arange(4)), (torch.arange(2), torch.arange(2))]
    sharded = ShardedBatches(batches)
    assert len(sharded) == 2
    assert [b[0].tolist() for b in sharded] == [[0, 1, 2, 3], [0, 1]]
    assert sharded._unsharded is batches


def test_shard_gives_a_batch_iterator_its_part_of_each_batch(as_rank) -> None:
    import ddpify.runtime as ddpify

    class Iterater:  # a project's own iterator: no DataLoader to rebuild
        def __iter__(self):
            for start in (0, 4):
                yield torch.arange(start, start + 4), torch.arange(start, start + 4) * 10

        def __len__(self):
            return 2

    as_rank(1, 2)
    sharded = ddpify.shard(Iterater())
    assert isinstance(sharded, ShardedBatches) and len(sharded) == 2
    assert [x.tolist() for x, _ in sharded] == [[2, 3], [6, 7]]
    assert ddpify.shard(sharded) is sharded  # sharded once
    assert ddpify.unsharded(sharded) is sharded._unsharded


class _Shuffling:
    """Shuffles with the global torch RNG at each pass, as project iterators do."""

    def __iter__(self):
        order = torch.randperm(8)
        for start in (0, 4):
            yield order[start : start + 4]

    def __len__(self):
        return 2


def _epochs(rank_noise: int) -> list[list[int]]:
    import ddpify.runtime as ddpify

    torch.manual_seed(0)  # what ddpify.seed gives every rank before training
    sharded = ddpify.shard(_Shuffling())
    torch.manual_seed(rank_noise)  # the per-rank streams once training runs (dropout)
    return [[i for batch in sharded for i in batch.tolist()] for _ in range(2)]


def test_the_iterator_shuffles_alike_on_every_rank_whatever_the_model_draws(as_rank) -> None:
    as_rank(1, 2)
    rank_a, rank_b = _epochs(11), _epochs(22)
    assert rank_a == rank_b  # the same order on every rank, so the cut parts are disjoint
    assert rank_a[0] != rank_a[1]  # and a new order each epoch


def test_a_generator_is_left_as_it_is(as_rank) -> None:
    import pytest

    import ddpify.runtime as ddpify

    as_rank(0, 2)
    stream = (torch.arange(4) for _ in range(2))
    with pytest.warns(UserWarning, match="not a plain torch DataLoader"):
        assert ddpify.shard(stream) is stream  # one pass only: nothing to replay, maybe sharded already
