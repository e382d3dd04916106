"""Run-time proof for issue 20, classes 2 and 3, spellings found in unseen scripts: models kept
in a dict and trained in a loop over it (wrapped where they go in), batches that reach backward
through an apex-style prefetcher class (the loader is sharded), and a model, optimizer and
loaders built by helpers of a sibling module, with the best weights reloaded after training.
Each converted script runs under torchrun with 2 CPU processes: disjoint shards that cover the
data and reshuffle, one checkpoint per file without ``module.`` keys, equal parameters."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "convert"  # golden inputs that also run


def _converted(source: Path, target: Path) -> str:
    result = convert_source(source.read_text())
    assert not result.manual, result.manual  # nothing left for a human
    target.write_text(result.output)
    return result.output


@pytest.mark.torchrun
def test_models_in_a_dict_are_wrapped_where_they_go_in(tmp_path: Path) -> None:
    text = _converted(DATA / "models_in_a_dict.py", tmp_path / "dict_ddp.py")
    assert text.count("ddpify.prepare_model(") == 2
    run = run_script(tmp_path / "dict_ddp.py", cwd=tmp_path).assert_ok()
    train, valid = run.loader_seq(64, nth=1), run.loader_seq(24)  # the sharded loader is built at the first training pass
    for epoch in range(4):  # two models, two epochs: four training passes
        run.assert_disjoint_cover(train, epoch, dataset_len=64)
    run.assert_reshuffled(train)
    for rank in (0, 1):  # validation reads the whole set on every rank
        assert sorted(run.indices(rank, valid, 0)) == list(range(24)), run.describe()
    run.assert_only_rank0_saves(min_saves=2)
    run.assert_no_module_keys()
    run.assert_params_equal()


@pytest.mark.torchrun
def test_loader_behind_a_prefetcher_is_sharded(tmp_path: Path) -> None:
    text = _converted(DATA / "apex_prefetcher.py", tmp_path / "prefetch_ddp.py")
    assert "ddpify.distributed_loader(" in text and "model = ddpify.prepare_model(model)" in text
    run = run_script(tmp_path / "prefetch_ddp.py", cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64)
    for epoch in (0, 1):
        run.assert_disjoint_cover(loader, epoch, dataset_len=64)
    run.assert_reshuffled(loader)
    run.assert_only_rank0_saves()
    run.assert_params_equal()


@pytest.mark.torchrun
def test_model_and_loaders_from_sibling_helpers(tmp_path: Path) -> None:
    shutil.copy(DATA / "sibling_project" / "helpers.py", tmp_path / "helpers.py")
    text = _converted(DATA / "sibling_project" / "train.py", tmp_path / "train_ddp.py")
    assert "train_loader = ddpify.shard(train_loader)" in text and "model = ddpify.prepare_model(model)" in text
    run = run_script(tmp_path / "train_ddp.py", cwd=tmp_path).assert_ok()
    train, valid = run.loader_seq(64, nth=1), run.loader_seq(24)  # the helper's loader, rebuilt sharded
    for epoch in (0, 1):
        run.assert_disjoint_cover(train, epoch, dataset_len=64)
        for rank in (0, 1):
            assert sorted(run.indices(rank, valid, epoch)) == list(range(24)), run.describe()
    run.assert_reshuffled(train)
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()
    run.assert_params_equal()


@pytest.mark.torchrun
def test_one_loader_call_for_each_split_trains_sharded_and_evaluates_whole(tmp_path: Path) -> None:
    text = _converted(GOLDEN / "one_loader_call_for_each_split" / "input.py", tmp_path / "splits_ddp.py")
    assert "only_when_training=True" in text and "ddpify.set_epoch(data_loader, epoch)" in text
    run = run_script(tmp_path / "splits_ddp.py", cwd=tmp_path).assert_ok()
    seqs = sorted({ld["seq"] for ld in run.loaders(0) if ld["dataset_len"] == 32 and ld["epochs"]})
    whole = [s for s in seqs if len(run.indices(0, s, 0)) == 32]  # the valid passes: the whole set on each rank
    sharded = [s for s in seqs if len(run.indices(0, s, 0)) == 16]  # the train passes: half each
    assert len(whole) == 2 and len(sharded) == 2, run.describe()
    for seq in whole:
        for rank in (0, 1):
            assert sorted(run.indices(rank, seq, 0)) == list(range(32)), run.describe()
    for seq in sharded:
        run.assert_disjoint_cover(seq, 0, dataset_len=32)
    assert run.indices(0, sharded[0], 0) != run.indices(0, sharded[1], 0)  # reshuffled although rebuilt each epoch
    run.assert_only_rank0_saves()
    run.assert_params_equal()


@pytest.mark.torchrun
def test_a_gradient_penalty_trains_through_ddp(tmp_path: Path) -> None:
    """Issue 20, class 4: the penalty's own backward leaves the last bias without a gradient;
    unconverted, DDP stops at the next forward. Converted, the run ends with equal parameters."""
    text = _converted(GOLDEN / "gradient_penalty_through_ddp" / "input.py", tmp_path / "gp_ddp.py")
    assert "(d_loss_gp + 0.0 * out.sum()).backward()" in text
    run = run_script(tmp_path / "gp_ddp.py", cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64)
    for epoch in (0, 1):
        run.assert_disjoint_cover(loader, epoch, dataset_len=64)
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()
    run.assert_params_equal()


@pytest.mark.torchrun
def test_a_sampling_method_is_no_bypass_and_a_resume_branch_joins(tmp_path: Path) -> None:
    """unseen20o's glow: ``model.module.sample()`` at a print step draws images under no_grad and
    trains nothing (its result reaches no backward; the project's ``Flow.sample`` trains
    nothing), so the model is wrapped and its loader sharded, instead of "not DDP"; the
    ``if args.load:`` resume that takes the model back from a helper gets no wrap of its own:
    the one wrap sits where the paths join. Trained, then resumed from its own session."""
    for name in ("flows.py", "train.py"):
        shutil.copy(DATA / "sampling_method_project" / name, tmp_path / name)
    result = convert_source((tmp_path / "train.py").read_text(), filename=str(tmp_path / "train.py"))
    assert not result.manual, result.manual
    assert result.output.count("ddpify.prepare_model(") == 1
    assert "images = ddpify.unwrap(model).sample()" in result.output
    converted = tmp_path / "train_ddp.py"
    converted.write_text(result.output)
    run = run_script(converted, cwd=tmp_path).assert_ok()
    seq = run.loader_seq(64)
    for epoch in (0, 1):
        run.assert_disjoint_cover(seq, epoch, dataset_len=64)
    run.assert_reshuffled(seq)
    run.assert_only_rank0_saves(min_saves=3)
    run.assert_no_module_keys()
    run.assert_params_equal()
    resumed = run_script(converted, ["--load", "session.pt", "--epochs", "1"], cwd=tmp_path).assert_ok()
    resumed.assert_params_equal()
