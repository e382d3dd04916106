"""Set-up code every rank runs that tests whether a folder exists and removes, creates or stops
on the answer (ddim's main.py): each rank asking for itself answers at its own moment, so a
late rank finds the folder an early one created and takes another branch. Converted, every
rank takes rank 0's answer (``ddpify.agreed``) and waits for rank 0's removal (a barrier)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.torchrun
def test_every_rank_takes_rank_zeros_answer_on_the_experiment_folder(tmp_path: Path) -> None:
    result = convert_source((DATA / "set_up_folders.py").read_text())
    assert "if ddpify.agreed(os.path.exists(args.exp)):" in result.output
    # rank 0's removal done before any rank makes the folder again (a race CI met without it:
    # another rank's makedirs saw the folder half removed, FileExistsError)
    assert "shutil.rmtree(args.exp)\n            ddpify.barrier()\n            os.makedirs(args.exp, exist_ok=True)" in result.output
    converted = tmp_path / "set_up_folders_ddp.py"
    converted.write_text(result.output)
    exp = tmp_path / "exp"

    fresh = run_script(converted, ["--exp", str(exp)], cwd=tmp_path, timeout=120).assert_ok()
    fresh.assert_only_rank0_saves()
    assert "folder exists" not in fresh.stdout, "the late rank found rank 0's new folder and stopped"

    stopped = run_script(converted, ["--exp", str(exp)], cwd=tmp_path, timeout=120).assert_ok()
    assert stopped.stdout.count("folder exists, stopping") == 1, stopped.stdout
    assert not stopped.saves(), "both ranks stop before training"

    (exp / "stale.txt").write_text("from an earlier run")
    overwritten = run_script(converted, ["--exp", str(exp), "--ni"], cwd=tmp_path, timeout=120).assert_ok()
    overwritten.assert_only_rank0_saves()
    assert sorted(p.name for p in exp.iterdir()) == ["model.pt"]


@pytest.mark.torchrun
def test_a_clock_named_save_folder_is_rank_zeros_on_every_rank(tmp_path: Path) -> None:
    """unseen20o's NRI crashed: each rank named its own ``logs/exp<now>`` folder, rank 0 saved the
    best model into its folder and rank 1 reloaded from its own, empty one. Converted, the clock
    is read once (rank 0's ``now`` on every rank): one folder, one checkpoint, read back by all."""
    result = convert_source((DATA / "clock_named_save_folder.py").read_text())
    assert "now = ddpify.agreed(datetime.datetime.now())" in result.output
    assert not result.manual, result.manual
    converted = tmp_path / "clock_ddp.py"
    converted.write_text(result.output)
    run = run_script(converted, cwd=tmp_path).assert_ok()
    folders = list((tmp_path / "logs").iterdir())
    assert len(folders) == 1 and (folders[0] / "model.pt").is_file(), folders
    run.assert_only_rank0_saves()
    run.assert_params_equal()
