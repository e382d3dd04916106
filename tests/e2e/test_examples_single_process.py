"""The showcase examples must run as ordinary single-process scripts (CPU)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import REPO_ROOT, run_script  # noqa: E402

EXAMPLES = REPO_ROOT / "examples"

EXPECTED_FILES = {
    "cnn_classifier": ["checkpoint.pt", "best.pt"],
    "trainer_class": ["trainer_ckpt.pt"],
    "legacy_dataparallel": ["model_final.pth"],
}
TRAIN_SET_SIZE = {"cnn_classifier": 512, "trainer_class": 1024, "legacy_dataparallel": 2048}


@pytest.mark.parametrize("name", sorted(EXPECTED_FILES))
def test_example_runs_single_process(name: str, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    result = run_script(EXAMPLES / name / "train.py", ["--epochs", "1", "--out-dir", str(out_dir)],
                        nproc=None, cwd=tmp_path, timeout=120)
    result.assert_ok()
    for filename in EXPECTED_FILES[name]:
        assert (out_dir / filename).is_file(), filename + result.describe()

    # Baseline for the converter's e2e tests: the tracer sees one shuffled pass
    # over the whole training set, and every save happens on "rank 0".
    n = TRAIN_SET_SIZE[name]
    seq = result.loader_seq(n)
    assert result.num_epochs(0, seq) == 1
    indices = result.indices(0, seq, 0)
    assert sorted(indices) == list(range(n)) and indices != list(range(n))
    assert result.dataset_hashes(0)
    assert {s["rank"] for s in result.saves()} == {0}
    result.assert_no_module_keys()


def test_cnn_classifier_resumes(tmp_path: Path) -> None:
    script = EXAMPLES / "cnn_classifier" / "train.py"
    out_dir = tmp_path / "out"
    run_script(script, ["--epochs", "1", "--out-dir", str(out_dir)],
               nproc=None, cwd=tmp_path, trace=False).assert_ok()
    resumed = run_script(script, ["--epochs", "2", "--out-dir", str(out_dir),
                                  "--resume", str(out_dir / "checkpoint.pt")],
                         nproc=None, cwd=tmp_path, trace=False)
    resumed.assert_ok()
    assert "Resumed from" in resumed.stdout
    assert "epoch   1" in resumed.stdout and "epoch   0" not in resumed.stdout
