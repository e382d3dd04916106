"""Run-time proof for issue 20, class 1 across files: the entry script trains nothing itself, a
``Trainer`` class of a sibling module builds the model and trains it on a loader the script
hands in. ``ddpify main.py -o main_ddp.py`` converts ``trainer.py`` alongside; under torchrun
with 2 CPU processes the shards are disjoint, cover the data and reshuffle, one checkpoint is
saved without ``module.`` keys, and the parameters end equal."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

PROJECT = Path(__file__).resolve().parent / "data" / "trainer_module_project"


@pytest.mark.torchrun
def test_training_in_a_sibling_module_runs_as_ddp(tmp_path: Path) -> None:
    for name in ("main.py", "trainer.py", "data_loader.py"):
        shutil.copy(PROJECT / name, tmp_path / name)
    converted = subprocess.run(
        [sys.executable, "-m", "ddpify", "main.py", "-o", "main_ddp.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert converted.returncode == 0, converted.stderr
    assert "needs a human" not in converted.stderr, converted.stderr
    run = run_script(tmp_path / "main_ddp.py", ["--epochs", "2"], cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64, nth=1)  # rebuilt sharded by ddpify.shard in Trainer.__init__
    for epoch in (0, 1):
        run.assert_disjoint_cover(loader, epoch, dataset_len=64)
    run.assert_reshuffled(loader)
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()
    run.assert_params_equal()
    plain = run_script(tmp_path / "main_ddp.py", ["--epochs", "1"], nproc=None, cwd=tmp_path)
    plain.assert_ok()  # still one process, like the original
