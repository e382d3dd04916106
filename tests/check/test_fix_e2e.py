"""``ddpify check --fix`` on a hand-written DDP script, then the fixed script trained for real
under torchrun (2 CPU processes, gloo): it must still finish (a fix that put a barrier where
only rank 0 runs would hang it), depend on nothing new (no ddpify import), and resume the
weights it saved (a fix that changed the checkpoint's keys under a ``strict=False`` resume
would silently restore nothing). The safe fixes and the unsafe ones are checked separately,
each copy trained twice; the two copies run side by side, and this process neither imports
torch nor starts ddpify as a subprocess, to keep the test short."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

pytestmark = [
    pytest.mark.torchrun,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch"),
]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "check" / "data" / "handwritten_ddp.py"
TIMEOUT_S = 150  # a hang shows up as a timeout, not as a stuck test run
LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK")


def _fixed(source: str, *, unsafe: bool) -> str:
    """``ddpify check --select DDP --fix [--unsafe-fixes]`` of the script (the engine the CLI runs)."""
    result = check_source(source, "train.py", rules=select_rules(["DDP"]), fix=True, unsafe_fixes=unsafe)
    assert result.fixed is not None
    return result.fixed


def _launch(folder: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env.update(CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "train.py", "--out", ".", *args]
    return subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )


def _finish(runs: dict[str, subprocess.Popen]) -> dict[str, str]:
    """Each launch's output; a launch that does not end in time (a hang) fails the test."""
    outputs: dict[str, str] = {}
    for name, proc in runs.items():
        try:
            output, _ = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for other in runs.values():
                if other.poll() is None:
                    os.killpg(other.pid, signal.SIGKILL)
            pytest.fail(f"the fixed script ({name}) hangs: no end after {TIMEOUT_S}s")
        assert proc.returncode == 0 or _teardown_abort(output), f"the fixed script ({name}) failed:\n{output}"
        outputs[name] = output
    return outputs


def _teardown_abort(output: str) -> bool:
    """gloo's abort in PyTorch's own teardown after both ranks finished ("terminate called
    without an active exception", about one loaded CPU run in a thousand; see the e2e harness):
    no rank raised, and the records each rank writes before its last barrier are checked by
    the test itself."""
    raised = re.search(r"^(\[rank\d+\]:)?\s*\w*(Error|Exception): ", output, re.M)
    return "terminate called without an active exception" in output and raised is None


def _ranks(folder: Path) -> list[dict]:
    return [json.loads((folder / f"rank{r}.json").read_text()) for r in range(2)]


def test_fixed_script_finishes_adds_no_import_and_resumes_its_weights(tmp_path: Path) -> None:
    original = SCRIPT.read_text()
    copies = {"safe": tmp_path / "safe", "unsafe": tmp_path / "unsafe"}
    texts = {name: _fixed(original, unsafe=name == "unsafe") for name in copies}
    for name, folder in copies.items():
        folder.mkdir()
        (folder / "train.py").write_text(texts[name])

    for name, text in texts.items():
        assert "ddpify" not in text, f"the {name} fixes made the script depend on ddpify"
        assert "train_sampler.set_epoch(epoch)" in text  # DDP001
        assert '"--local_rank", "--local-rank"' in text and 'os.environ.get("LOCAL_RANK", -1)' in text  # DDP016
        assert "if not dist.is_initialized() or dist.get_rank() == 0:\n            print(" in text  # DDP012
        # untouched: the helper's save (its caller is guarded; a barrier there would hang) and
        # the wrapper's state_dict (the strict=False resume loads it back through the wrapper)
        assert "def save_checkpoint(state, path):\n    torch.save(state, path)\n" in text
        assert '"model": model.state_dict()' in text and 'model.load_state_dict(ckpt["model"], strict=False)' in text
    assert "torch.load(path)\n" in texts["safe"]  # DDP004's fix is unsafe here: `ckpt` is used directly
    assert 'torch.load(path, map_location="cpu")' in texts["unsafe"]
    assert texts["safe"] != original

    first = _finish({name: _launch(folder) for name, folder in copies.items()})
    for name, folder in copies.items():
        assert first[name].count("epoch 0 done") == 1, "the print guard lets rank 0 print alone"
        for rank, record in enumerate(_ranks(folder)):
            assert record["local_rank"] == rank  # --local_rank now defaults to torchrun's LOCAL_RANK
            assert record["orders"][0] != record["orders"][1]  # set_epoch: a new order each epoch
        assert (folder / "checkpoint.pth").is_file()

    _finish({name: _launch(folder, "--resume") for name, folder in copies.items()})
    for name, folder in copies.items():
        for record in _ranks(folder):
            assert record["missing"] == [] and record["unexpected"] == []
            saved, resumed = record["checkpoint"], record["resumed"]
            assert set(resumed) == set(saved) == {"module.weight", "module.bias"}
            for key in saved:
                assert _close(resumed[key], saved[key]), f"{name}: {key} was not resumed"


def _close(a: list, b: list) -> bool:
    """Nested lists of floats, equal to rounding."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7)
