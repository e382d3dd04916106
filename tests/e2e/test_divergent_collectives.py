"""A save under a condition the ranks decide differently must not wait for the other ranks:
the converted script finishes on 2 ranks (CPU, gloo) and rank 0 alone writes the checkpoint.
With ``ddpify.save``'s barrier the same script hangs (rank 0 waits at the barrier while rank 1
has gone on to the next epoch's all-reduce). Every rank that reloads the best checkpoint
afterwards waits for rank 0's last save first (``ddpify.barrier()`` before the load)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
EPOCHS = 4


@pytest.mark.torchrun
def test_best_checkpoint_decided_per_rank_finishes_and_saves_on_rank_0(tmp_path: Path) -> None:
    result = convert_source((DATA / "divergent_best_checkpoint.py").read_text())
    assert "wait=False" in result.output
    assert any("score > best" in item.why for item in result.manual)
    converted = tmp_path / "divergent_best_checkpoint_ddp.py"
    converted.write_text(result.output)

    run = run_script(converted, ["--epochs", str(EPOCHS), "--out-dir", str(tmp_path)], cwd=tmp_path, timeout=150).assert_ok()

    entered = {rank: sorted(tmp_path.glob(f"entered-rank{rank}-*")) for rank in (0, 1)}
    assert len(entered[0]) == EPOCHS and len(entered[1]) < EPOCHS, f"the ranks did not disagree: {entered}"
    run.assert_only_rank0_saves(min_saves=EPOCHS)
    run.assert_no_module_keys()
    assert len(run.saves()) == EPOCHS, "one write per improvement rank 0 saw, by rank 0 only"
    assert set(torch.load(tmp_path / "best.pt")) == {"weight", "bias"}
    assert not list(tmp_path.glob(".best.pt.*.tmp")), "an interrupted atomic write left its temp file"
    assert "ddpify.barrier()\n    evaluate(model)" in result.output
    best = sum(t.sum().item() for t in torch.load(tmp_path / "best.pt").values())
    loaded = {rank: float((tmp_path / f"loaded-rank{rank}").read_text()) for rank in (0, 1)}
    assert loaded == {0: pytest.approx(best), 1: pytest.approx(best)}, "a rank reloaded before rank 0's last save ended"
