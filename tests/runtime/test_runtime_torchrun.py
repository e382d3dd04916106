"""Real 2-process DDP runs (torchrun, CPU/gloo). Two launches in total; the scripts in
scripts/ record what each rank saw and these tests assert on it."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.torchrun

N = 32  # dataset size in scripts/ddp_data.py


@pytest.fixture
def data(torchrun_results) -> list[dict]:
    return torchrun_results("ddp_data.py")


@pytest.fixture
def model_io(torchrun_results) -> list[dict]:
    return torchrun_results("ddp_model_io.py")


def flat(batches: list[list[int]]) -> list[int]:
    return [i for batch in batches for i in batch]


def expected_shard(epoch: int, rank: int) -> list[int]:
    """What DistributedSampler(shuffle=True, seed=0) gives ``rank`` of 2 in ``epoch``."""
    perm = torch.randperm(N, generator=torch.Generator().manual_seed(epoch)).tolist()
    return perm[rank::2]


# ----------------------------------------------------------------------------- environment


def test_rank_queries_before_and_after_setup(data):
    for r, rec in enumerate(data):
        assert rec["before_setup"] == {
            "rank": r,
            "local_rank": r,
            "world_size": 2,
            "is_main": r == 0,
            "is_distributed": False,
        }
        assert rec["after_setup"] == {
            "rank": r,
            "world_size": 2,
            "is_distributed": True,
            "device": "cpu",
        }
        assert rec["after_teardown_is_distributed"] is False


# ------------------------------------------------------------------------------- sharding


@pytest.mark.parametrize("key", ["auto", "explicit"])
def test_shuffled_shards_are_disjoint_cover_and_reshuffle(data, key):
    """Both with ddpify.set_epoch ("explicit") and without any set_epoch call ("auto")."""
    for epoch in range(2):
        shards = [flat(rec[key][epoch]) for rec in data]
        assert not set(shards[0]) & set(shards[1])
        assert sorted(shards[0] + shards[1]) == list(range(N))
        for r in range(2):
            assert shards[r] == expected_shard(epoch, r), "ranks disagree on the permutation"
    for rec in data:
        assert flat(rec[key][0]) != flat(rec[key][1]), "no reshuffle between epochs"


def test_shard_rebuilds_a_finished_loader_like_distributed_loader(data):
    """ddpify.shard(DataLoader(...)) for loaders built in another file: disjoint, covering,
    reshuffled shards, batch for batch what distributed_loader gives for the same dataset."""
    for rec in data:
        assert rec["shard_type"] == "EpochDataLoader"
        assert rec["shard"] == rec["explicit"]
    for epoch in range(2):
        shards = [flat(rec["shard"][epoch]) for rec in data]
        assert not set(shards[0]) & set(shards[1])
        assert sorted(shards[0] + shards[1]) == list(range(N))
    for rec in data:
        assert flat(rec["shard"][0]) != flat(rec["shard"][1]), "no reshuffle between epochs"


def test_set_epoch_selects_that_epochs_order(data):
    for r, rec in enumerate(data):
        assert flat(rec["explicit_epoch5"]) == expected_shard(5, r)


def test_global_batch_is_split_between_ranks(data):
    for rec in data:
        assert rec["loader_types"] == ["EpochDataLoader", "EpochDataLoader"]
        assert [len(b) for b in rec["auto"][0]] == [4, 4, 4, 4]  # batch_size=8 over 2 ranks


def test_user_sampler_is_kept_and_sharded(data):
    subset = set(range(0, N, 2))
    for rec in data:
        assert rec["user_sampler_type"] == "ShardedSampler"
        assert all(len(b) == 2 for b in rec["user_sampler"][0])
    for epoch in range(2):
        shards = [flat(rec["user_sampler"][epoch]) for rec in data]
        assert not set(shards[0]) & set(shards[1])
        assert set(shards[0]) | set(shards[1]) == subset
        assert len(shards[0]) + len(shards[1]) == len(subset)
    assert flat(data[0]["user_sampler"][0]) != flat(data[0]["user_sampler"][1])


def test_user_batch_sampler_deals_whole_batches_with_padding(data):
    # batches [0,1,2] [3,4,5] [6,7,8] [9,10,11] [12], padded with [0,1,2] to 6
    assert data[0]["batch_sampler"] == [[0, 1, 2], [6, 7, 8], [12]]
    assert data[1]["batch_sampler"] == [[3, 4, 5], [9, 10, 11], [0, 1, 2]]


def test_iterable_dataset_is_left_alone_and_warned_about_on_rank0_only(data):
    for rec in data:
        assert rec["iterable_type"] == "DataLoader"
        assert rec["iterable"] == [[0, 1], [2, 3], [4, 5]]
    messages = data[0]["warnings"]
    assert any("batch_sampler" in m for m in messages)
    assert any("IterableDataset" in m for m in messages)
    assert data[1]["warnings"] == []


def test_per_process_batch_and_indivisible_batch(data):
    for rec in data:
        assert rec["per_process_batch_sizes"] == [5, 5, 5, 1]  # 16 samples per rank
        assert rec["indivisible_error"] == (
            "batch_size 5 is not divisible by world size 2; use a multiple of 2 or convert with --per-process-batch"
        )
    assert data[0]["per_process_stderr"] == (
        "ddpify: per-process batch 5 x 2 processes = effective batch 10\nddpify: per-process batch 7 x 2 processes = effective batch 14\n"
    )
    assert data[1]["per_process_stderr"] == ""


# -------------------------------------------------------------------------------- seeding


def test_seed_is_shared_then_per_rank_after_first_iteration(data):
    assert data[0]["rand_after_seed"] == data[1]["rand_after_seed"]
    assert data[0]["rand_after_first_iter"] != data[1]["rand_after_first_iter"]
    # DataLoader workers are seeded from the per-rank RNG as well.
    assert data[0]["worker_values"] != data[1]["worker_values"]


def test_rngs_the_script_never_seeds_start_alike_then_go_per_rank(data):
    """torch, random and numpy, unseeded: the same draws on every rank after setup (a dataset
    generated before training is the same data everywhere), per-rank once training data flows."""
    assert data[0]["unseeded_after_setup"] == data[1]["unseeded_after_setup"]
    assert data[0]["unseeded_after_first_iter"][0] != data[1]["unseeded_after_first_iter"][0]
    assert data[0]["unseeded_after_first_iter"][1] != data[1]["unseeded_after_first_iter"][1]


# ---------------------------------------------------------------------------------- model


def test_prepare_model_keeps_ranks_in_sync(model_io):
    r0, r1 = model_io
    assert r0["data_sum"] != r1["data_sum"], "ranks should train on different data"
    assert r0["init_params"] == r1["init_params"]
    assert r0["trained_params"] == r1["trained_params"]
    assert r0["trained_params"] != r0["init_params"]
    for rec in model_io:
        assert rec["wrapped_type"] == "DistributedDataParallel"
        assert rec["unwrap_is_model"] is True
        assert rec["has_sync_bn"] is False  # CPU: SyncBatchNorm is never used
        assert rec["ddp_vs_reference_max_diff"] < 1e-5


def test_prepare_model_edge_cases(model_io):
    for rec in model_io:
        assert rec["frozen_unchanged"] is True
        assert rec["ddp_unchanged"] is True
        assert rec["dataparallel_rewrapped"] == ["DistributedDataParallel", True]


def test_load_state_dict_strips_module_prefix(model_io):
    for rec in model_io:
        assert rec["load_missing_unexpected"] == [[], []]
        assert rec["state_still_prefixed"] is True
        assert rec["fresh_matches"] is True
        assert rec["wrapper_loads_both"] == ["<All keys matched successfully>"] * 2


def test_wrapper_checkpoints_have_the_bare_models_keys(model_io):
    """Code ddpify cannot rewrite (another file's trainer, an EMA) saves and copies
    ``wrapper.state_dict()``: it must be the bare model's, also when a module holds the wrapper."""
    for rec in model_io:
        assert rec["wrapper_keys_plain"] is True
        assert rec["plain_copy_loads_wrapper_state"] is True
        assert rec["held_keys"] == ["0", "1", "3"]
        assert rec["held_round_trip"] == "<All keys matched successfully>"


# ------------------------------------------------------------------------------------ I/O


def test_save_writes_once_and_others_see_it(model_io):
    r0, r1 = model_io
    assert r0["torch_save_calls"] == 2 and r1["torch_save_calls"] == 0
    for rec in model_io:
        assert rec["exists_after_save"] is True
        assert rec["loaded_writer"] == 0
        assert rec["loaded_device"] == "cpu"
        assert rec["whole_model_type"] == "Sequential"  # DDP wrapper stripped before saving
        assert rec["dir_listing"] == ["ckpt.pt", "whole_model.pt"]  # no temp files left


def test_rank_zero_print_and_main_process_first(model_io):
    r0, r1 = model_io
    assert (r0["rank_zero_type"], r0["recorder_created"]) == ("Recorder", 1)
    assert (r1["rank_zero_type"], r1["recorder_created"]) == ("NullObject", 0)
    assert r0["printed"] == "hello from 0\n"
    assert r1["printed"] == ""
    assert r0["marker_seen_in_body"] is True
    assert r1["marker_seen_in_body"] is True  # rank 1 ran its body after rank 0 finished


def test_distributed_context_tears_down_when_body_raises(model_io):
    for r, rec in enumerate(model_io):
        assert rec["env"] == [r, r, 2, 2]
        assert rec["initialized_inside"] is True
        assert rec["is_distributed"] is True
        assert rec["raised"] is True
        assert rec["initialized_after"] is False
