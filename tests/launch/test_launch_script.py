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
CONVERTED = "import ddpify.runtime as ddpify\n\nwith ddpify.distributed():\n    pass\n"


@pytest.fixture(autouse=True)
def scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The launched scripts exist (a missing one is refused): run in a folder holding them."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("train_ddp.py", "t.py"):
        (folder / name).write_text(CONVERTED)
    monkeypatch.chdir(folder)
    return folder


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
    assert run.stderr == ""
    assert "mpirun -np 1 python t.py" in run.stdout


@pytest.mark.parametrize("missing", ["nope.py", "."])
def test_missing_script_is_an_error_of_one_line(missing: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ddpify", "launch-script", "--launcher", "torchrun", missing], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"ddpify: error: {missing}: ") and len(result.stderr.splitlines()) == 1


def test_unconverted_script_is_launched_with_a_warning(scripts: Path) -> None:
    (scripts / "train.py").write_text("import torch\nmodel = torch.nn.Linear(1, 1)\n")
    result = CliRunner().invoke(main, ["launch-script", "--launcher", "torchrun", "train.py"])
    assert result.exit_code == 0
    assert "ddpify: warning: train.py: not converted" in result.stderr and "ddpify train.py -o train_ddp.py" in result.stderr
    assert "torchrun" in result.stdout and "warning" not in result.stdout


@pytest.mark.parametrize(
    "source",
    [
        "from ddpify import runtime\n",
        "import torch.distributed as dist\ndist.init_process_group('gloo')\n",
        "# >>> ddpify standalone runtime >>>\n# <<< ddpify standalone runtime <<<\n",
    ],
)
def test_distributed_scripts_get_no_warning(scripts: Path, source: str) -> None:
    (scripts / "own.py").write_text(source)
    result = CliRunner().invoke(main, ["launch-script", "--launcher", "mpirun", "own.py"])
    assert result.exit_code == 0 and result.stderr == ""


def test_option_of_another_launcher_is_warned_about() -> None:
    result = CliRunner().invoke(main, ["launch-script", "--launcher", "torchrun", "--slurm-mode", "torchrun", "t.py"])
    assert result.exit_code == 0
    assert result.stderr == "ddpify: warning: --slurm-mode is read by --launcher slurm only: ignored for --launcher torchrun\n"
    quiet = CliRunner().invoke(main, ["launch-script", "--launcher", "slurm", "--slurm-mode", "torchrun", "t.py"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
