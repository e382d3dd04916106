"""unseen20r's ctgan, as a class (``data/rank_zero_samples_project``): samples drawn from the
DDP model under ``if log:``, where ``log`` is a project class that writes a file and so becomes
rank 0's alone (a falsy no-op object on the other ranks). Through the wrapper, that forward
broadcasts the BatchNorm buffers to ranks that never come (ctgan hung). Converted, it runs on
the plain module (``ddpify.unwrap(generator)(fixed)``): the run ends, one log, equal parameters."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "rank_zero_samples_project"


@pytest.mark.torchrun
def test_samples_drawn_under_a_rank_zero_objects_test_use_the_plain_module(tmp_path: Path) -> None:
    for name in ("sample_log.py", "train.py"):
        shutil.copy(DATA / name, tmp_path / name)
    script = tmp_path / "train.py"
    result = convert_source(script.read_text(), filename=str(script))
    assert 'log = ddpify.rank_zero(SampleLog)("samples.log")' in result.output
    assert "samples = ddpify.unwrap(generator)(fixed).detach()" in result.output
    converted = tmp_path / "train_ddp.py"
    converted.write_text(result.output)
    run = run_script(converted, cwd=tmp_path, timeout=90).assert_ok()
    run.assert_only_rank0_saves()
    run.assert_params_equal()
    assert len((tmp_path / "samples.log").read_text().splitlines()) == 8  # 16 steps (the global batch kept), every other one, rank 0 only
