"""``ddpify launch-script``: golden files for every launcher layout, and every generated script
passes ``bash -n`` and shellcheck (skipped only where shellcheck is not installed)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ddpify.cli import main

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = bool(os.environ.get("DDPIFY_UPDATE_GOLDENS"))

CASES = {
    "torchrun_single.sh": ["--launcher", "torchrun", "--procs-per-node", "4"],
    "torchrun_multinode.sh": ["--launcher", "torchrun", "--nodes", "2", "--gpus-per-node", "8"],
    "slurm_tasks.sbatch": ["--launcher", "slurm", "--nodes", "4", "--gpus-per-node", "4"],
    "slurm_torchrun.sbatch": ["--launcher", "slurm", "--slurm-mode", "torchrun", "--nodes", "2", "--gpus-per-node", "8"],
    "slurm_cpu.sbatch": ["--launcher", "slurm", "--procs-per-node", "2"],
    "mpirun_single.sh": ["--launcher", "mpirun", "--procs-per-node", "2"],
    "mpirun_multinode.sh": ["--launcher", "mpirun", "--nodes", "3", "--procs-per-node", "2"],
}
PROGRAM = ["train_ddp.py", "--", "--epochs", "3", "--out-dir", "runs/it's here"]


def _generate(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    result = CliRunner().invoke(main, ["launch-script", *CASES[name], "-o", str(target), *PROGRAM])
    assert result.exit_code == 0, result.output
    return target


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_script_matches_golden_and_is_executable(tmp_path: Path, name: str) -> None:
    text = _generate(tmp_path, name).read_text()
    golden = GOLDEN / name
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"regenerate: DDPIFY_UPDATE_GOLDENS=1 pytest {__file__}"
    assert (tmp_path / name).stat().st_mode & stat.S_IXUSR


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_script_is_valid_bash(name: str) -> None:
    check = subprocess.run(["bash", "-n", str(GOLDEN / name)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (.ci/run installs it)")
def test_generated_scripts_pass_shellcheck() -> None:
    check = subprocess.run(["shellcheck", "--shell=bash", *sorted(str(GOLDEN / n) for n in CASES)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_stdout_when_no_output_file_and_arguments_are_quoted() -> None:
    result = CliRunner().invoke(main, ["launch-script", "--launcher", "torchrun", "t.py", "--", "a b", "$HOME"])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("t.py 'a b' '$HOME'")


@pytest.mark.parametrize(
    "options, message",
    [
        (["--launcher", "torchrun", "--procs-per-node", "0"], "at least 1"),
        (["--launcher", "slurm", "--gpus-per-node", "2", "--procs-per-node", "4"], "one GPU per process"),
        (["--launcher", "pbs"], "Invalid value for '--launcher'"),
    ],
)
def test_impossible_layouts_are_refused(options: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["launch-script", *options, "t.py"])
    assert result.exit_code == 2
    assert message in result.output


def test_launch_script_does_not_import_torch() -> None:
    code = ("import sys; from ddpify.cli import main; "
            "main(['launch-script', '--launcher', 'mpirun', 't.py'], standalone_mode=False); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "mpirun -np 1 python t.py" in run.stdout
