"""distributed_loader / samplers / seeding in one process: plain runs unchanged, and each rank's
view simulated with launcher variables (loaders need rank()/world_size(), not a group)."""

from __future__ import annotations

import random
import sys
import warnings

import pytest
import torch
from torch.utils.data import (
    TensorDataset,
    BatchSampler,
    DataLoader,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
)
from torch.utils.data.distributed import DistributedSampler

import ddpify.runtime as ddpify
from ddpify.runtime import _seed
from ddpify.runtime._data import EpochDataLoader, ShardedBatchSampler, ShardedSampler

DATA = list(range(20))


def as_lists(loader) -> list[list[int]]:
    return [batch.tolist() for batch in loader]


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(5))


# ------------------------------------------------------------------------ single process


def test_single_process_loader_is_a_plain_identical_dataloader():
    gen_a, gen_b = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    ours = ddpify.distributed_loader(DATA, batch_size=6, shuffle=True, generator=gen_a)
    theirs = DataLoader(DATA, batch_size=6, shuffle=True, generator=gen_b)
    assert type(ours) is DataLoader
    assert isinstance(ours.sampler, RandomSampler)
    for _ in range(2):
        assert as_lists(ours) == as_lists(theirs)


def test_single_process_loader_uses_global_rng_like_dataloader():
    torch.manual_seed(11)
    ours = as_lists(ddpify.distributed_loader(DATA, 4, True, drop_last=True))
    after_ours = torch.rand(2)
    torch.manual_seed(11)
    theirs = as_lists(DataLoader(DATA, 4, True, drop_last=True))
    assert ours == theirs and len(ours) == 5
    assert torch.equal(after_ours, torch.rand(2)), "the RNG stream must be untouched"


def test_single_process_per_process_batch_and_odd_batch_are_untouched():
    loader = ddpify.distributed_loader(DATA, batch_size=7, per_process_batch=True)
    assert type(loader) is DataLoader and loader.batch_size == 7


def test_set_epoch_on_plain_loaders_never_fails():
    ddpify.set_epoch(DataLoader(DATA, batch_size=2), 3)
    ddpify.set_epoch(object(), 3)
    sampler = DistributedSampler(DATA, num_replicas=1, rank=0)
    ddpify.set_epoch(DataLoader(DATA, sampler=sampler), 4)
    assert sampler.epoch == 4


def test_seed_and_switch_are_noops_for_rank_offsets_single_process():
    ddpify.seed(torch.manual_seed, 5)
    expected = torch.rand(3)
    ddpify.seed(torch.manual_seed, 5)
    ddpify.switch_to_rank_seeds()
    assert torch.equal(torch.rand(3), expected)


# ----------------------------------------------------------------------- simulated ranks


def rank_views(as_rank, world: int, make, epochs: int = 1, explicit: bool = False):
    """Build a loader as each rank would and return the batches each rank sees per epoch."""
    views = []
    for r in range(world):
        as_rank(r, world)
        loader = make()
        seen = []
        for epoch in range(epochs):
            if explicit:
                ddpify.set_epoch(loader, epoch)
            seen.append(as_lists(loader))
        views.append(seen)
    return views


def test_default_sampler_shards_and_splits_batch(as_rank):
    views = rank_views(as_rank, 2, lambda: ddpify.distributed_loader(DATA, batch_size=4, shuffle=True), 2)
    for epoch in range(2):
        perm = torch.randperm(20, generator=torch.Generator().manual_seed(epoch)).tolist()
        for r in range(2):
            assert [i for b in views[r][epoch] for i in b] == perm[r::2]
            assert all(len(b) == 2 for b in views[r][epoch])
    assert views[0][0] != views[0][1]


def test_loader_arguments_are_forwarded(as_rank):
    as_rank(1, 2)
    collate_calls = []

    def collate(batch):
        collate_calls.append(batch)
        return batch

    loader = ddpify.distributed_loader(DATA, 4, False, collate_fn=collate, drop_last=True)
    assert isinstance(loader, EpochDataLoader)
    assert isinstance(loader.sampler, DistributedSampler)
    assert loader.sampler.shuffle is False and loader.sampler.drop_last is True
    assert loader.batch_size == 2 and loader.drop_last is True
    assert list(loader) == [[1, 3], [5, 7], [9, 11], [13, 15], [17, 19]]
    assert len(collate_calls) == 5


def test_loader_accepts_dict_splat_and_rejects_bad_arguments(as_rank):
    as_rank(0, 2)
    loader = ddpify.distributed_loader(**{"dataset": DATA, "batch_size": 10})
    assert loader.batch_size == 5
    with pytest.raises(TypeError, match="invalid DataLoader arguments"):
        ddpify.distributed_loader(DATA, bogus=1)


def test_indivisible_batch_is_rejected_with_advice(as_rank):
    as_rank(0, 4)
    with pytest.raises(ValueError) as info:
        ddpify.distributed_loader(DATA, batch_size=10)
    assert str(info.value) == (
        "batch_size 10 is not divisible by world size 4; use a multiple of 4 or convert with "
        "--per-process-batch"
    )


def test_per_process_batch_keeps_batch_and_announces_once_on_rank0(as_rank, capsys):
    as_rank(0, 4)
    loader = ddpify.distributed_loader(DATA, batch_size=10, per_process_batch=True)
    ddpify.distributed_loader(DATA, batch_size=10, per_process_batch=True)
    assert loader.batch_size == 10
    err = capsys.readouterr().err
    assert err.count("ddpify: per-process batch 10 x 4 processes = effective batch 40") == 1
    as_rank(1, 4)
    ddpify.distributed_loader(DATA, batch_size=6, per_process_batch=True)
    assert capsys.readouterr().err == ""


def test_batch_size_none_is_left_alone(as_rank):
    as_rank(1, 2)
    loader = ddpify.distributed_loader(DATA, batch_size=None)
    assert loader.batch_size is None
    assert [int(x) for x in loader] == list(range(1, 20, 2))


def test_user_sampler_is_sharded_not_replaced(as_rank):
    subset = [0, 3, 4, 8, 9, 12, 15, 17, 18, 19]
    views = rank_views(
        as_rank, 3, lambda: ddpify.distributed_loader(DATA, batch_size=3, sampler=SubsetRandomSampler(subset)), 2
    )
    for epoch in range(2):
        shards = [[i for b in views[r][epoch] for i in b] for r in range(3)]
        assert [len(s) for s in shards] == [4, 4, 4]  # 10 padded to 12
        drawn = [shards[i % 3][i // 3] for i in range(12)]  # undo the striding
        assert sorted(drawn[:10]) == sorted(subset), "ranks must agree on one full order"
        assert drawn[10:] == drawn[:2], "padding repeats from the start"
    assert views[0][0] != views[0][1]


def test_sharded_sampler_epochs_and_rng_isolation():
    inner = RandomSampler(range(9))
    sampler = ShardedSampler(inner, num_replicas=2, rank=1, seed=0)
    assert len(sampler) == 5 and sampler.sampler is inner
    torch.manual_seed(1)
    first = list(sampler)
    after = torch.rand(2)
    torch.manual_seed(1)
    assert torch.equal(after, torch.rand(2)), "drawing must not consume the global RNG"
    torch.manual_seed(999)  # the global state must not matter either
    assert list(sampler) == first
    sampler.set_epoch(1)
    assert list(sampler) != first


def test_sharded_sampler_agrees_for_python_random_samplers():
    class PySampler:
        def __iter__(self):
            order = list(range(8))
            random.shuffle(order)
            return iter(order)

        def __len__(self):
            return 8

    shards = []
    for r in range(2):
        random.seed(r)  # per-rank python RNG, as after switch_to_rank_seeds
        shards.append(list(ShardedSampler(PySampler(), 2, r)))
    assert sorted(shards[0] + shards[1]) == list(range(8))


def test_sharded_sampler_forwards_set_epoch():
    inner = DistributedSampler(DATA, num_replicas=1, rank=0)
    ShardedSampler(inner, 2, 0).set_epoch(7)
    assert inner.epoch == 7


def test_batch_sampler_deals_batches_round_robin_and_warns(as_rank):
    make = lambda: ddpify.distributed_loader(  # noqa: E731
        DATA, batch_sampler=BatchSampler(SequentialSampler(range(7)), 2, drop_last=False)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        views = rank_views(as_rank, 3, make)
    # batches b0=[0,1] b1=[2,3] b2=[4,5] b3=[6], padded with b0, b1 to 6
    assert views[0][0] == [[0, 1], [6]]
    assert views[1][0] == [[2, 3], [0, 1]]
    assert views[2][0] == [[4, 5], [2, 3]]
    ddpify_warnings = [w for w in caught if "batch_sampler" in str(w.message)]
    assert len(ddpify_warnings) == 1  # once, from rank 0 only
    assert "3 times larger" in str(ddpify_warnings[0].message)


def test_sharded_batch_sampler_length():
    batches = BatchSampler(SequentialSampler(range(7)), 2, drop_last=False)
    assert [len(ShardedBatchSampler(batches, 3, r)) for r in range(3)] == [2, 2, 2]


def test_iterable_dataset_gets_plain_loader_and_warning(as_rank):
    as_rank(0, 2)
    with pytest.warns(UserWarning, match="IterableDataset"):
        loader = ddpify.distributed_loader(Stream(), batch_size=2)
    assert type(loader) is DataLoader
    assert as_lists(loader) == [[0, 1], [2, 3], [4]]


def test_epoch_loader_auto_advances_and_set_epoch_overrides(as_rank):
    as_rank(0, 2)
    loader = ddpify.distributed_loader(DATA, batch_size=2, shuffle=True)
    epoch0, epoch1 = as_lists(loader), as_lists(loader)
    assert loader.next_epoch == 2 and loader.sampler.epoch == 1
    assert epoch0 != epoch1
    ddpify.set_epoch(loader, 0)
    assert as_lists(loader) == epoch0
    ddpify.set_epoch(loader, 1)
    assert as_lists(loader) == epoch1


def test_a_loader_rebuilt_each_epoch_goes_on_from_the_last_pass_over_its_dataset(as_rank):
    """``for epoch ...: loader = DataLoader(ds, ...)`` with no set_epoch: each new loader's
    DistributedSampler would start at epoch 0 and replay one order; it starts where the last
    loader of the same line over the same dataset stopped. Another line or another dataset
    keeps its own count; set_epoch wins."""
    as_rank(0, 2)
    reference = ddpify.distributed_loader(DATA, batch_size=2, shuffle=True)
    orders = [as_lists(reference) for _ in range(3)]
    fresh = []
    for epoch in range(3):
        rebuilt = ddpify.distributed_loader(DATA, batch_size=2, shuffle=True)
        assert rebuilt.next_epoch == epoch
        fresh.append(as_lists(rebuilt))
    assert fresh == orders
    weak = TensorDataset(torch.arange(20))  # a Dataset object: counted through a weak reference
    assert [ddpify.distributed_loader(weak, batch_size=2, shuffle=True) for _ in range(2)][1].next_epoch == 0  # never read
    for expected in (0, 1):  # one line, rebuilt
        rebuilt_weak = ddpify.distributed_loader(weak, batch_size=2, shuffle=True)
        assert rebuilt_weak.next_epoch == expected
        list(rebuilt_weak)
    other = list(range(100, 100 + len(DATA)))
    assert ddpify.distributed_loader(other, batch_size=2, shuffle=True).next_epoch == 0
    pinned = ddpify.distributed_loader(DATA, batch_size=2, shuffle=True)
    ddpify.set_epoch(pinned, 0)
    assert as_lists(pinned) == orders[0]


# ------------------------------------------------------- shard: loaders built elsewhere


def test_shard_single_process_returns_the_loader_itself():
    loader = DataLoader(DATA, batch_size=7, shuffle=True)
    assert ddpify.shard(loader) is loader
    assert ddpify.shard(loader, per_process_batch=True) is loader


@pytest.mark.parametrize("shuffle", [True, False])
def test_shard_matches_distributed_loader(as_rank, shuffle):
    views = rank_views(as_rank, 2, lambda: ddpify.distributed_loader(DATA, batch_size=4, shuffle=shuffle), 2)
    for r in range(2):
        theirs = views[r]
        as_rank(r, 2)
        ours = ddpify.shard(DataLoader(DATA, batch_size=4, shuffle=shuffle))
        assert isinstance(ours, EpochDataLoader) and ours.batch_size == 2
        assert [as_lists(ours), as_lists(ours)] == theirs


def test_shard_a_container_of_loaders_by_role(as_rank, monkeypatch):
    """``shard({"train": ..., "val": ...})`` (a helper of another file returns both): each loader
    is sharded for the passes that train, and reads the whole set otherwise."""
    from ddpify.runtime import _data

    train, val = DataLoader(DATA, batch_size=4, shuffle=True), DataLoader(DATA, batch_size=4)
    single = ddpify.shard({"train": train, "val": val, "classes": 10})
    assert single == {"train": train, "val": val, "classes": 10}
    as_rank(1, 2)
    loaders = ddpify.shard({"train": train, "val": val, "classes": 10})
    assert loaders["classes"] == 10 and loaders["val"]._plain is val
    # not left to chance: a wrapper of an earlier test in this worker, not yet collected, trains
    monkeypatch.setattr(_data, "training_now", lambda: False)
    whole = sorted(i for batch in as_lists(loaders["train"]) for i in batch)
    assert whole == sorted(range(len(DATA))), "a pass that does not train reads the whole set"
    monkeypatch.setattr(_data, "training_now", lambda: True)
    shard = [i for batch in as_lists(loaders["train"]) for i in batch]
    assert len(shard) == len(DATA) // 2 and loaders["train"].batch_size == 2
    assert [type(x) for x in ddpify.shard((train, val))] == [_data.RunTimeRoleLoader] * 2


def test_shard_keeps_the_loaders_arguments(as_rank):
    as_rank(1, 2)

    def collate(batch):
        return batch

    def init(worker_id):
        pass

    generator = torch.Generator()
    original = DataLoader(
        DATA, batch_size=4, shuffle=True, collate_fn=collate, num_workers=1, pin_memory=True,
        drop_last=True, timeout=30, worker_init_fn=init, generator=generator,
        persistent_workers=True, prefetch_factor=3, multiprocessing_context="spawn",
    )
    loader = ddpify.shard(original)
    assert isinstance(loader.sampler, DistributedSampler)
    assert loader.sampler.shuffle is True and loader.sampler.drop_last is True
    assert (loader.dataset, loader.batch_size, loader.drop_last) == (DATA, 2, True)
    assert (loader.collate_fn, loader.worker_init_fn, loader.generator) == (collate, init, generator)
    assert (loader.num_workers, loader.pin_memory, loader.timeout) == (1, True, 30)
    assert (loader.persistent_workers, loader.prefetch_factor) == (True, 3)
    assert loader.multiprocessing_context is original.multiprocessing_context
    assert ddpify.unsharded(loader) is original


def test_shard_splits_the_batch_like_distributed_loader(as_rank):
    as_rank(0, 4)
    with pytest.raises(ValueError, match="batch_size 10 is not divisible by world size 4"):
        ddpify.shard(DataLoader(DATA, batch_size=10))
    assert ddpify.shard(DataLoader(DATA, batch_size=10), per_process_batch=True).batch_size == 10


def test_shard_keeps_user_samplers_sharded(as_rank):
    as_rank(0, 2)
    subset = ddpify.shard(DataLoader(DATA, batch_size=2, sampler=SubsetRandomSampler(range(0, 20, 2))))
    assert isinstance(subset.sampler, ShardedSampler)
    assert list(subset.sampler.indices) == list(range(0, 20, 2))  # the user's sampler's attributes stay readable
    assert len(subset.sampler) == 5  # this rank's share
    with pytest.raises(AttributeError):
        subset.sampler.no_such_attribute
    drawn = RandomSampler(DATA, replacement=True, num_samples=6)
    assert ddpify.shard(DataLoader(DATA, batch_size=2, sampler=drawn)).sampler.sampler is drawn
    batches = BatchSampler(SequentialSampler(DATA), 3, drop_last=False)
    with pytest.warns(UserWarning, match="batch_sampler"):
        by_batch = ddpify.shard(DataLoader(DATA, batch_sampler=batches))
    assert isinstance(by_batch.batch_sampler, ShardedBatchSampler)
    assert by_batch.batch_sampler.batch_sampler is batches


def test_shard_leaves_what_it_cannot_rebuild_and_warns(as_rank):
    as_rank(0, 2)
    stream = DataLoader(Stream(), batch_size=2)
    with pytest.warns(UserWarning, match="IterableDataset"):
        assert ddpify.shard(stream) is stream

    class Custom(DataLoader):
        def __iter__(self):  # batches its own way: a rebuild would change them
            return super().__iter__()

    custom = Custom(DATA, batch_size=2)
    with pytest.warns(UserWarning, match="Custom is not a plain torch DataLoader"):
        assert ddpify.shard(custom) is custom
    already = ddpify.distributed_loader(DATA, batch_size=2)
    assert ddpify.shard(already) is already


def test_shard_rebuilds_a_subclass_that_only_changes_how_it_is_built(as_rank):
    """Conv-TasNet's AudioDataLoader: ``__init__`` sets ``collate_fn`` (and here a tag the
    training code may read); its batches are DataLoader's, so a plain rebuild shards them."""

    class Configured(DataLoader):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.collate_fn = lambda items: torch.tensor(items) * 10
            self.tag = "audio"

    as_rank(1, 2)
    sharded = ddpify.shard(Configured(DATA, batch_size=4))
    assert sharded.tag == "audio"
    drawn = [int(v) for batch in sharded for v in batch]
    assert len(drawn) == len(DATA) // 2 and all(v % 10 == 0 for v in drawn)  # its shard, through its collate_fn


def test_shard_keeps_a_batch_too_small_to_split_per_process(as_rank, capsys):
    """A loader of pre-built minibatches (``batch_size=1``) cannot give half an item to each
    rank: each rank takes its own item per step, and the run says so."""
    as_rank(0, 2)
    sharded = ddpify.shard(DataLoader(DATA, batch_size=1, shuffle=True))
    assert sharded.batch_size == 1 and len(sharded) == len(DATA) // 2
    assert "a batch of 1 does not split over 2 processes" in capsys.readouterr().err


def test_shard_then_set_epoch_selects_the_shuffle(as_rank):
    as_rank(1, 2)
    loader = ddpify.shard(DataLoader(DATA, batch_size=2, shuffle=True))
    epoch0, epoch1 = as_lists(loader), as_lists(loader)
    assert epoch0 != epoch1
    ddpify.set_epoch(loader, 0)
    assert as_lists(loader) == epoch0


# ----------------------------------------------------------------------------- seeding


def test_switch_to_rank_seeds_offsets_by_rank_once(as_rank):
    as_rank(1, 2)
    calls = []
    ddpify.seed(calls.append, 2**32 - 1)
    ddpify.seed(torch.manual_seed, 42)
    assert calls == [2**32 - 1]
    ddpify.switch_to_rank_seeds()
    ddpify.switch_to_rank_seeds()
    assert calls == [2**32 - 1, 0]  # (value + rank) % 2**32, applied once
    expected = torch.Generator().manual_seed(43)
    assert torch.equal(torch.rand(3), torch.rand(3, generator=expected))


def test_the_switch_tells_verify_where_per_rank_noise_starts(as_rank, monkeypatch):
    """``ddpify verify`` judges the per-rank noise from the switch on, loader or not."""
    import types

    notes = []
    fake = types.SimpleNamespace(note=lambda kind, data: notes.append((kind, data)))
    monkeypatch.setitem(sys.modules, "ddpify.verify.recorder", fake)
    as_rank(1, 2)
    ddpify.switch_to_rank_seeds()
    ddpify.switch_to_rank_seeds()
    assert [kind for kind, _ in notes] == ["rank-seeds"]  # once
    assert notes[0][1]["site"].startswith("test_runtime_data.py:")


def test_first_loader_iteration_switches_seeds(as_rank):
    as_rank(1, 2)
    ddpify.seed(torch.manual_seed, 0)
    loader = ddpify.distributed_loader(DATA, batch_size=2)
    assert not _seed._switched
    iter(loader)
    assert _seed._switched


def test_reseeding_rearms_the_switch(as_rank):
    as_rank(1, 2)
    calls = []
    ddpify.seed(calls.append, 10)
    ddpify.switch_to_rank_seeds()
    ddpify.seed(calls.append, 20)  # replaces the record, ranks identical again
    ddpify.switch_to_rank_seeds()
    assert calls == [10, 11, 20, 21]


def test_shard_keeps_the_kind_of_dict(as_rank):
    """A Munch-like attribute dict of loaders comes back as one (``loaders.src`` still works)."""

    class AttrDict(dict):
        def __getattr__(self, name):
            return self[name]

    as_rank(1, 2)
    loaders = ddpify.shard(AttrDict(src=DataLoader(DATA, batch_size=4, shuffle=True), classes=10), only_when_training=True)
    assert type(loaders) is AttrDict and loaders.classes == 10 and loaders.src is loaders["src"]


def test_per_process_batch_keeps_every_batch_full_where_one_process_does(as_rank, capsys):
    """20 samples make 5 full batches of 4 in one process; two shards of 10 would end in a batch
    of 2, which code sized by the batch size cannot take: each rank drops it, and says so."""
    views = rank_views(as_rank, 2, lambda: ddpify.distributed_loader(DATA, batch_size=4, shuffle=True, per_process_batch=True))
    assert [[len(b) for b in view[0]] for view in views] == [[4, 4], [4, 4]]
    assert "each rank drops its last partial batch" in capsys.readouterr().err


def test_per_process_batch_leaves_a_partial_batch_the_one_process_run_has_too(as_rank):
    data = list(range(22))  # 5 batches of 4 and one of 2 in one process: the script copes with one
    views = rank_views(as_rank, 2, lambda: ddpify.distributed_loader(data, batch_size=4, per_process_batch=True))
    assert [[len(b) for b in view[0]] for view in views] == [[4, 4, 3], [4, 4, 3]]


def test_per_process_batch_larger_than_a_shard_drops_nothing(as_rank):
    as_rank(0, 4)
    loader = ddpify.distributed_loader(DATA, batch_size=10, per_process_batch=True)
    assert [len(b) for b in loader] == [5]


class _BalancedBatches:
    """A project's balanced-batch dataset (deep-text-recognition-benchmark's
    Batch_Balanced_Dataset): one loader per source, an iterator opened over each, and a
    get_batch() that takes the next batch of each, reopening an exhausted iterator."""

    def __init__(self):
        self.loaders = [DataLoader(DATA[:8], batch_size=2, shuffle=True), DataLoader(DATA[8:], batch_size=4, shuffle=True)]
        self.iterators = [iter(loader) for loader in self.loaders]
        self.name = "balanced"

    def get_batch(self):
        batch = []
        for i, iterator in enumerate(self.iterators):
            try:
                batch += next(iterator).tolist()
            except StopIteration:
                self.iterators[i] = iter(self.loaders[i])
                batch += next(self.iterators[i]).tolist()
        return batch


def test_an_object_keeping_loaders_has_them_sharded_in_place(as_rank):
    """ddpify.shard(obj) for an object that is no loader and no batch iterator: the loaders it
    keeps are rebuilt sharded (the global batch split), the iterators it opened over them
    reopened over the rebuilds; reopening after an exhausted pass reads a new shard order."""
    taken = []
    for r in range(2):
        as_rank(r, 2)
        balanced = ddpify.shard(_BalancedBatches())
        assert balanced.name == "balanced" and all(getattr(loader, "_unsharded", None) is not None for loader in balanced.loaders)
        taken.append([balanced.get_batch() for _ in range(4)])  # one pass of the first loader's shard (4 of 1)
    assert all(len(batch) == 1 + 2 for steps in taken for batch in steps), "each loader's batch split across the 2 ranks"
    first = [[batch[0] for batch in taken[r]] for r in range(2)]
    assert sorted(first[0] + first[1]) == DATA[:8], "one pass of the first loader: disjoint shards that cover it"
    second = [[i for batch in taken[r][:3] for i in batch[1:]] for r in range(2)]
    assert sorted(second[0] + second[1]) == DATA[8:], "the iterator opened in __init__ reads the sharded loader"


def test_an_object_keeping_no_loader_is_handed_back_with_a_warning(as_rank):
    as_rank(0, 2)
    holder = type("Holder", (), {})()
    holder.data = [1, 2, 3]
    with pytest.warns(UserWarning, match="not a plain torch DataLoader"):
        assert ddpify.shard(holder) is holder
    assert holder.data == [1, 2, 3]
