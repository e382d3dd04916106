"""Prove the e2e harness and its trace shim measure what they claim to.

A hand-written, correct DDP script must pass every check; the same script with
injected bugs must fail the matching checks; a plain script's recorded indices
must equal the indices it actually saw, and tracing must not change results.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import RunResult, TraceMissing, run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
DDP_SCRIPT = DATA / "handwritten_ddp.py"
PLAIN_SCRIPT = DATA / "plain_train.py"
N_SAMPLES = 128  # size of handwritten_ddp.py's dataset


# Each torchrun launch costs several seconds, so each launch gets exactly one test
# (a module-scoped fixture would be re-run by every pytest-xdist worker anyway).

# ------------------------------------------------------------ correct DDP script
@pytest.mark.torchrun
def test_correct_ddp_script_passes_every_check(tmp_path: Path) -> None:
    good_run = run_script(DDP_SCRIPT, ["--epochs", "2"], cwd=tmp_path).assert_ok()
    _check_traces_both_ranks(good_run)
    _check_shards_disjoint_covering_and_reshuffled(good_run)
    _check_saves_params_datasets(good_run)


def _check_traces_both_ranks(good_run: RunResult) -> None:
    assert good_run.world_size == 2
    for rank in (0, 1):
        trace = good_run.trace(rank)
        assert trace["rank"] == rank
        assert trace["process_group"] == {"backend": "gloo", "rank": rank, "world_size": 2}
        assert trace["destroyed_process_group"] is True
        assert len(good_run.loaders(rank)) == 1
        loader = good_run.loader(rank, 0)
        assert loader["sampler"] == "DistributedSampler"
        assert loader["dataset_len"] == N_SAMPLES
        assert good_run.num_epochs(rank, 0) == 2
        assert [e["sampler_epoch"] for e in loader["epochs"]] == [0, 1]
        assert good_run.batch_sizes(rank, 0, 0) == [8] * 8


def _check_shards_disjoint_covering_and_reshuffled(good_run: RunResult) -> None:
    seq = good_run.loader_seq(N_SAMPLES)
    for epoch in (0, 1):
        good_run.assert_disjoint_cover(seq, epoch)
        assert sorted(good_run.global_order(seq, epoch)) == list(range(N_SAMPLES))
    good_run.assert_reshuffled(seq, 0, 1)
    assert good_run.global_order(seq, 0) != good_run.global_order(seq, 1)


def _check_saves_params_datasets(good_run: RunResult) -> None:
    good_run.assert_only_rank0_saves(min_saves=1)
    good_run.assert_no_module_keys()
    saves = good_run.saves()
    assert len(saves) == 1 and saves[0]["ok"]
    assert saves[0]["keys"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert Path(saves[0]["abspath"]).is_file()

    good_run.assert_params_equal()
    hashes = good_run.param_hashes()
    assert len(hashes) == 2 and len(hashes[0]) == 1 and len(hashes[0][0]) == 64
    good_run.assert_datasets_equal()
    assert len(good_run.dataset_hashes(0)) == 1


# ------------------------------------------------------- same script, with bugs
@pytest.mark.torchrun
def test_buggy_ddp_script_fails_matching_checks(tmp_path: Path) -> None:
    args = ["--epochs", "2", "--no-sampler", "--all-ranks-save", "--rank-seed", "--diverge"]
    buggy_run = run_script(DDP_SCRIPT, args, cwd=tmp_path).assert_ok()
    seq = buggy_run.loader_seq(N_SAMPLES)
    assert buggy_run.loader(0, seq)["sampler"] == "RandomSampler"
    with pytest.raises(AssertionError, match="more than once"):
        buggy_run.assert_disjoint_cover(seq, 0)
    with pytest.raises(AssertionError, match="non-zero ranks"):
        buggy_run.assert_only_rank0_saves()
    with pytest.raises(AssertionError, match="'module.' keys"):
        buggy_run.assert_no_module_keys()
    with pytest.raises(AssertionError, match="parameters differ"):
        buggy_run.assert_params_equal()
    with pytest.raises(AssertionError, match="TensorDatasets differ"):
        buggy_run.assert_datasets_equal()
    assert sorted(s["rank"] for s in buggy_run.saves()) == [0, 1]


def _fake_result(shards_per_epoch: list[list[list[int]]]) -> RunResult:
    """RunResult built from hand-made index lists: shards_per_epoch[epoch][rank]."""
    traces = []
    for rank in range(len(shards_per_epoch[0])):
        epochs = [{"sampler_epoch": None, "indices": ep[rank], "batch_sizes": [len(ep[rank])]}
                  for ep in shards_per_epoch]
        traces.append({"rank": rank, "loaders": [{"seq": 0, "dataset_len": 4, "epochs": epochs}],
                       "saves": [], "datasets": [], "models": [], "errors": []})
    return RunResult(cmd=["fake"], returncode=0, stdout="", stderr="fake-stderr",
                     traces=traces, nproc=len(traces))


def test_reshuffle_and_cover_checks_on_fake_traces() -> None:
    same_every_epoch = _fake_result([[[0, 2], [1, 3]], [[0, 2], [1, 3]]])
    same_every_epoch.assert_disjoint_cover(0, 0)
    with pytest.raises(AssertionError, match="same order"):
        same_every_epoch.assert_reshuffled(0, 0, 1)

    missing = _fake_result([[[0, 2], [2, 0]]])
    with pytest.raises(AssertionError, match="miss 2 indices"):
        missing.assert_disjoint_cover(0, 0)

    padded = _fake_result([[[0, 2, 3], [1, 3, 0]]])
    padded.assert_disjoint_cover(0, 0, allow_padding=True)
    with pytest.raises(AssertionError, match="fake-stderr"):
        padded.assert_disjoint_cover(0, 0)


# ------------------------------------------------------------- plain python runs
def test_plain_run_records_what_the_script_saw(tmp_path: Path) -> None:
    traced_dir, untraced_dir = tmp_path / "traced", tmp_path / "untraced"
    traced_dir.mkdir()
    untraced_dir.mkdir()
    traced = run_script(PLAIN_SCRIPT, ["--epochs", "2"], nproc=None, cwd=traced_dir).assert_ok()
    untraced = run_script(PLAIN_SCRIPT, ["--epochs", "2"], nproc=None, cwd=untraced_dir,
                          trace=False).assert_ok()

    observed = json.loads((traced_dir / "observed.json").read_text())
    baseline = json.loads((untraced_dir / "observed.json").read_text())
    # the shim must not change data order, RNG consumption or results
    assert observed == baseline

    assert traced.world_size == 1 and len(traced.traces) == 1
    trace = traced.trace(0)
    assert trace["process_group"] is None and trace["models"] == []
    assert [ld["num_workers"] for ld in traced.loaders(0)] == [0, 2, 0]
    for seq, name in enumerate(observed["order"]):
        assert traced.num_epochs(0, seq) == 2, name  # persistent workers: 2 passes, 1 iterator
        for epoch in range(2):
            assert traced.indices(0, seq, epoch) == observed["observed"][name][epoch], (name, epoch)
    assert traced.indices(0, 2, 0) == list(range(96))  # the shuffle=False loader
    assert traced.batch_sizes(0, 1, 0) == [12] * 8
    assert [(s["rank"], s["path"]) for s in traced.saves()] == [(0, "./plain.pt")]
    assert len(traced.dataset_hashes(0)) == 1


def test_failure_messages_include_stderr(tmp_path: Path) -> None:
    script = tmp_path / "crash.py"
    script.write_text("import sys\nsys.stderr.write('boom-marker\\n')\nsys.exit(3)\n")
    result = run_script(script, [], nproc=None, cwd=tmp_path, trace=False)
    assert result.returncode == 3 and not result.ok
    with pytest.raises(AssertionError, match="boom-marker"):
        result.assert_ok()
    with pytest.raises(AssertionError, match="boom-marker"):
        result.indices(0, 0, 0)  # no trace at all: TraceMissing carries stderr too


def test_missing_rank_trace_is_reported(tmp_path: Path) -> None:
    script = tmp_path / "noop.py"
    script.write_text("print('hi')\n")
    result = run_script(script, [], nproc=None, cwd=tmp_path, trace=False)
    result.nproc = 2  # pretend it was a 2-rank launch that left no traces
    with pytest.raises(TraceMissing, match="no trace for rank 0"):
        result.saves()


def test_timeout_kills_the_run(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text("import time\ntime.sleep(120)\n")
    result = run_script(script, [], nproc=None, cwd=tmp_path, timeout=2, trace=False)
    assert result.timed_out and not result.ok
    assert result.elapsed < 60


def test_only_a_teardown_abort_after_every_rank_finished_counts_as_clean() -> None:
    from harness import _aborted_after_the_end

    abort = "terminate called without an active exception\n... exitcode: -6"
    assert _aborted_after_the_end(abort, [{"rank": 0}, {"rank": 1}], 2, False)
    assert not _aborted_after_the_end(abort, [{"rank": 0}, None], 2, False)  # rank 1 never reached its end
    assert not _aborted_after_the_end(abort, [{"rank": 0}], 2, False)
    assert not _aborted_after_the_end("Traceback ... RuntimeError: boom", [{"rank": 0}, {"rank": 1}], 2, False)
    assert not _aborted_after_the_end(abort, [{"rank": 0}, {"rank": 1}], 2, True)
    died = [{"rank": 0, "uncaught": "RuntimeError('Expected to have finished reduction')"}, {"rank": 1}]
    assert not _aborted_after_the_end(abort, died, 2, False)  # a failed run stays failed
