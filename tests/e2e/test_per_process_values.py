"""Values each process would make for itself, made once for the job, checked on a real 2-rank
run (CPU, gloo): a temporary folder rank 0 saves into is the one rank 1 loads from (and is
removed once both are done), an unseeded random_split is the same on both ranks (setup seeds the
RNGs the script never seeds alike), the log file
holds each line once (rank 1's warning goes to stderr), and a download into a file is complete
for both ranks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def test_conversion_makes_the_per_process_values_shared() -> None:
    output = convert_source((DATA / "per_process_values.py").read_text()).output
    assert "ddpify.shared_temporary_directory()" in output
    # the unseeded split runs after ddpify.setup(), which seeds the unseeded RNGs alike on every
    # rank: it stays as written (the torchrun test below checks both ranks split alike)
    assert "generator=" not in output
    assert "ddpify.rank_zero_logging(logging.basicConfig)(" in output
    assert ".to(ddpify.device_from(args.device))" in output
    assert "with ddpify.main_process_first():\n    if ddpify.is_main_process():\n        urllib.request.urlretrieve(" in output


@pytest.mark.torchrun
def test_per_process_values_agree_on_two_ranks(tmp_path: Path) -> None:
    converted = tmp_path / "per_process_values_ddp.py"
    converted.write_text(convert_source((DATA / "per_process_values.py").read_text()).output)
    source = tmp_path / "source.txt"
    source.write_text("line\n" * 20000)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = run_script(converted, ["--out-dir", str(tmp_path), "--source", str(source)], cwd=tmp_path, trace=False, env=env)
    run.assert_ok()
    results = [json.loads((tmp_path / f"result-{rank}.json").read_text()) for rank in (0, 1)]
    assert results[0]["val"] == results[1]["val"], "random_split differs between ranks"
    assert results[0]["scratch"] == results[1]["scratch"], "each rank used its own temporary folder"
    assert not Path(results[0]["scratch"]).exists(), "the shared temporary folder was not removed"
    assert results[0]["lines"] == results[1]["lines"] == 20000, "a rank read an incomplete download"
    assert (tmp_path / "train.log").read_text().splitlines() == ["INFO epoch 0 done", "INFO epoch 1 done", "WARNING finished"]
    assert "[rank 1] WARNING:train:finished" in run.stderr
