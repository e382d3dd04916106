"""unseen20q's vae_lagging, as a class (``data/vae_own_loss``): a VAE trained through its own
``loss`` method, called once in an inner encoder-only loop and once in the joint step after
it (each call followed by its own backward), batches drawn by numpy index draws (including the
deprecated ``random_integers``), an inner loop stopped on each rank's own running loss, and
stdout replaced by a tee into a log file. Converted: the VAE is wrapped and both calls run as
the wrapper's forward, each rank draws its own batches, every rank stops the inner loop once one would
(``ddpify.any_rank``; else the ranks fall out of step and the gradient all-reduce hangs), and only
rank 0 replaces its stdout (a no-op stand-in there broke ``sys.stdout.encoding`` readers)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "vae_own_loss"


@pytest.mark.torchrun
def test_a_model_trained_through_its_own_loss_in_two_loops_runs_as_ddp(tmp_path: Path) -> None:
    for name in ("modules.py", "train.py"):
        shutil.copy(DATA / name, tmp_path / name)
    script = tmp_path / "train.py"
    result = convert_source(script.read_text(), filename=str(script))
    assert result.output.count("ddpify.through_ddp(vae).loss(") == 2
    assert "if ddpify.any_rank(burn_pre_loss - burn_cur_loss < 0):" in result.output
    assert "ddpify.rank_random(np.random).random_integers(" in result.output
    assert "if ddpify.is_main_process():\n            sys.stdout = Tee(\"train.log\")" in result.output
    assert not any("not wrapped" in m.why or "may decide differently" in m.why for m in result.manual), result.manual
    converted = tmp_path / "train_ddp.py"
    converted.write_text(result.output)
    run = run_script(converted, cwd=tmp_path, timeout=120).assert_ok()
    run.assert_only_rank0_saves()
    run.assert_params_equal()
    assert (tmp_path / "train.log").read_text().count("epoch 1 loss") == 1
