"""unseen20p's relgan_iter, as a class (``data/probed_folder_generator_batches.py``): a run
folder named by probing for the first free one (``while os.path.exists(d): run += 1``), batches
drawn by an infinite generator and taken with ``generator.__next__()``, and the previous
checkpoint removed by a one-line ``if os.path.exists(p): os.remove(p)``. Converted: every rank
takes rank 0's answers while probing (``ddpify.agreed``: one folder per run, the next run the
next folder), each rank draws its own batches (``ddpify.rank_random``) and, from the first of them,
its own noise from torch's stream (seed + rank), and rank 0 alone removes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.torchrun
def test_one_probed_folder_per_run_per_rank_batches_and_one_removal(tmp_path: Path) -> None:
    result = convert_source((DATA / "probed_folder_generator_batches.py").read_text())
    assert "while ddpify.agreed(os.path.exists(base_dir)):" in result.output
    assert "ddpify.rank_random(np.random).choice(" in result.output
    assert "    if ddpify.is_main_process():\n        if os.path.exists(previous): os.remove(previous)" in result.output
    assert not any("sharded none" in m.why for m in result.manual), result.manual
    converted = tmp_path / "relgan_ddp.py"
    converted.write_text(result.output)

    first = run_script(converted, cwd=tmp_path, timeout=120).assert_ok()
    first.assert_only_rank0_saves()
    first.assert_params_equal()
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["exp-0"]
    folder = tmp_path / "runs" / "exp-0"
    assert sorted(p.name for p in folder.glob("epoch_*.pt")) == ["epoch_2.pt"]
    drawn = [(folder / f"drawn_{rank}.txt").read_text().split("\n") for rank in (0, 1)]
    assert len(drawn[0]) == len(drawn[1]) > 10
    pairs = list(zip(drawn[0][:-1], drawn[1][:-1], strict=True))
    assert all(a.split(" noise ")[0] != b.split(" noise ")[0] for a, b in pairs), "the ranks drew the same batches"
    assert all(a.split(" noise ")[1] != b.split(" noise ")[1] for a, b in pairs), "the ranks drew the same noise"

    run_script(converted, cwd=tmp_path, timeout=120).assert_ok()
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["exp-0", "exp-1"]
