"""``ddpify verify --nproc 2`` on CPU, for real (torchrun, gloo): each broken script exits 1
with the rows of its mistakes FAIL, each correct one (the converted examples too) exits 0.
One launch per script; the scripts combine several mistakes each to keep the launches few."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.torchrun

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
EXAMPLES = ROOT / "examples"
LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")


def verify(tmp_path: Path, script: Path, *args: str, options: tuple[str, ...] = ()) -> tuple[int, dict[str, dict], str, float]:
    """(exit code, rows by key, table, seconds) of ``ddpify verify -q --json ... SCRIPT -- ARGS``."""
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    report = tmp_path / "verdict.json"
    command = [sys.executable, "-m", "ddpify", "verify", "-q", "--json", str(report), *options, str(script), "--", *args]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=400)
    elapsed = time.monotonic() - started
    assert report.exists(), f"no verdict (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}"
    rows = {row["key"]: row for row in json.loads(report.read_text())["rows"]}
    return done.returncode, rows, done.stdout, elapsed


def statuses(rows: dict[str, dict]) -> dict[str, str]:
    return {key: row["status"] for key, row in rows.items()}


def test_handwritten_ddp_with_the_classic_mistakes_fails_each_row(tmp_path: Path) -> None:
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "bad_handwritten.py", str(tmp_path))
    assert code == 1, table
    failed = {key for key, status in statuses(rows).items() if status == "FAIL"}
    assert failed == {"run", "shards", "reshuffle", "draws", "wrapped", "forward", "params", "checkpoints", "writes", "rng"}, table
    evidence = {key: row["evidence"] for key, row in rows.items()}
    assert "every rank read every index it fetched (no DistributedSampler?)" in evidence["shards"]  # no sampler
    assert "set_epoch not called" in evidence["reshuffle"]  # missing set_epoch
    assert "torch.randint at bad_handwritten.py:36 drew the same values on every rank" in evidence["draws"]
    assert "2 parameter tensor(s) of Linear, which is not wrapped" in evidence["wrapped"]
    assert "bad_handwritten.py:44 moves the DDP-wrapped Sequential from cpu to meta" in evidence["wrapped"]  # move after wrap
    assert "Sequential.forward called at bad_handwritten.py:37 outside the wrapper" in evidence["forward"]  # bypass
    assert "differs between ranks at the end" in evidence["params"]
    assert "last.pt (bad_handwritten.py:42) saved by ranks [0, 1]" in evidence["checkpoints"]  # save on every rank
    assert "'module.' keys (module.0.weight" in evidence["checkpoints"]  # wrapped state dict saved
    assert "train.log opened for writing on ranks [0, 1]" in evidence["writes"]
    assert "print at bad_handwritten.py:30 on ranks [0, 1]" in evidence["writes"]
    assert "same RNG state on every rank" in evidence["rng"]  # same seed on every rank with augmentation
    assert statuses(rows)["init"] == "PASS"  # the same seed does give identical data and init


def test_correct_handwritten_ddp_passes(tmp_path: Path) -> None:
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "good_handwritten.py", str(tmp_path))
    assert code == 0, table
    assert statuses(rows) == {**dict.fromkeys(rows, "PASS"), "batch": "n/a"}, table
    assert "1 tagged per rank" in rows["writes"]["evidence"]
    assert "not compared" in rows["batch"]["evidence"]


def test_batches_grabbed_outside_training_are_not_training_passes(tmp_path: Path) -> None:
    """A fixed sample from the test loader before training, one training batch each epoch to
    print its shape: a correct conversion, once failed as "set_epoch not called" and as an
    unsharded training loader."""
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "good_converted_grabs.py", str(tmp_path))
    assert code == 0, table
    assert {"shards", "reshuffle", "batch"} <= {key for key, row in rows.items() if row["status"] == "PASS"}, table
    assert "3 epochs, shards of 16+16" in rows["shards"]["evidence"] and "loader #1" not in table, table
    assert "per-process batch kept at conversion, as the batch's length 4 sizes tensors built in training" in rows["batch"]["evidence"]


def test_a_per_process_batch_nothing_needed_fails(tmp_path: Path) -> None:
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "bad_per_process_batch.py")
    assert code == 1 and {key for key, row in rows.items() if row["status"] == "FAIL"} == {"batch"}, table
    assert "global batch 16 = 8 + 8, but 8 as one process" in rows["batch"]["evidence"], table
    assert "no tensor built in training has the batch's length 8, so nothing needed it" in rows["batch"]["evidence"], table


@pytest.mark.parametrize(("argument", "status"), [("own", "PASS"), ("same", "FAIL")])
def test_numpy_index_draws_are_judged_per_rank(tmp_path: Path, argument: str, status: str) -> None:
    """A ``ddpify.rank_random(np.random)`` stream draws other batches on each rank; the global
    numpy stream seeded alike on every rank draws the same ones."""
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "numpy_index_draws.py", argument)
    assert rows["draws"]["status"] == status, table
    assert ("different on every rank" if status == "PASS" else "drew the same values on every rank") in rows["draws"]["evidence"], table


def test_an_unsharded_loader_with_workers_fails_the_shards_row(tmp_path: Path) -> None:
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "bad_unsharded_workers.py")
    assert code == 1 and rows["shards"]["status"] == "FAIL", table
    assert "every rank read every index it fetched" in rows["shards"]["evidence"], table


@pytest.mark.parametrize(("argument", "status", "evidence"), [("--shard", "PASS", "disjoint, cover all 32"), ("", "FAIL", "every rank read every index")])
def test_numpy_indices_of_a_subset_sampler_are_judged(tmp_path: Path, argument: str, status: str, evidence: str) -> None:
    code, rows, table, _ = verify(tmp_path, SCRIPTS / "numpy_subset_sampler.py", *([argument] if argument else []))
    assert rows["shards"]["status"] == status and evidence in rows["shards"]["evidence"], table


def test_a_barrier_only_rank_0_reaches_hangs_until_the_timeout_naming_where_each_rank_was(tmp_path: Path) -> None:
    code, rows, table, elapsed = verify(tmp_path, SCRIPTS / "rank0_only_save.py", str(tmp_path), options=("--timeout", "10"))
    assert code == 1, table
    # collective #1 of each rank is setup's seed for the RNGs the script never seeds, #2 the wrapped
    # model's first-forward check (did the forward change parameters?)
    assert rows["hang"]["evidence"] == (
        "no progress for 10 s, killed: rank 0 in ddpify.save at rank0_only_save.py:28 (its collective #3); "
        "rank 1 in dist.all_reduce at rank0_only_save.py:29 (its collective #3)"
    ), table
    assert rows["run"]["status"] == "FAIL" and rows["shards"]["status"] == "PASS", table
    assert elapsed < 150  # start-up (up to 120 s under load) + 10 s + the kill, not the group's 30 minutes


KEPT = {"run", "shards", "reshuffle", "batch", "wrapped", "forward", "params", "checkpoints", "writes", "init", "hang"}


@pytest.mark.parametrize(
    "script,args,options",
    [
        ("cnn_classifier/train.py", ("--epochs", "2"), ()),  # the single-GPU script: converted by verify first
        ("trainer_class/train_ddp.py", ("--epochs", "2"), ("--steps", "40")),  # stops inside the second epoch
        ("legacy_dataparallel/train_ddp.py", ("--epochs", "2", "--batch-size", "128"), ()),
    ],
)
def test_the_converted_examples_pass(tmp_path: Path, script: str, args: tuple[str, ...], options: tuple[str, ...]) -> None:
    code, rows, table, _ = verify(tmp_path, EXAMPLES / script, *args, "--out-dir", str(tmp_path), options=options)
    assert code == 0, table
    assert {key for key, row in rows.items() if row["status"] == "PASS"} == KEPT, table
    if options:
        assert rows["run"]["evidence"].startswith("stopped after 40 optimizer steps on every rank (--steps 40)")  # gloo may abort after
        assert "2 epochs, the last one stopped early, shards of 512+512, disjoint, cover all 1024" in rows["shards"]["evidence"]
    if script.endswith("train.py"):
        assert "(converted by ddpify first)" in table
        assert "(TensorDataset of 512, train.py:102)" in rows["shards"]["evidence"], table  # the user's line, not the copy's


def test_json_to_a_fifo_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """``--json`` writes only a regular file (atomically); a FIFO there is exit 2, one line, left
    as it was, and the script is never launched (no torchrun: this answers at once)."""
    os.mkfifo(tmp_path / "out")
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('must not run')\n")
    done = subprocess.run(
        [sys.executable, "-m", "ddpify", "verify", "--json", "out", "train.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "out: is a FIFO" in done.stderr, done.stderr
    assert stat.S_ISFIFO(os.stat(tmp_path / "out").st_mode)
