"""``ddpify check``'s usage errors: unknown rule codes and config keys are exit 2 with the
nearest valid one, and a file that could not be checked never ends in "All checks passed."."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ddpify.check.config import rule_codes

DDP_SCRIPT = "import torch\nimport torch.distributed as dist\n\nstate = torch.load('ckpt.pt')\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(DDP_SCRIPT)
    (tmp_path / "pyproject.toml").write_text('[tool.ddpify]\nextend-select = ["DDP004"]\n')  # an opt-in rule
    return tmp_path


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--select", "DDP999", "ddpify: error: unknown rule DDP999 (did you mean DDP009?)"),
        ("--ignore", "DDP004,DDP31", "ddpify: error: unknown rule DDP31 (did you mean DDP031?)"),
        ("--select", "XYZ", "ddpify: error: unknown rule XYZ"),
    ],
)
def test_unknown_rule_code_is_exit_2_with_the_nearest(cli, project: Path, option: str, value: str, message: str) -> None:
    result = cli("check", "--no-cache", option, value, "train.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [message]
    assert result.stdout == ""


@pytest.mark.parametrize("value", ["DDP", "DDP0", "ddp00", "DDP004", "DDP000"])
def test_codes_and_prefixes_of_codes_stay_valid(cli, project: Path, value: str) -> None:
    result = cli("check", "--no-cache", "--select", value, "--require-ddp", "train.py", cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert "error" not in result.stderr


@pytest.mark.parametrize(
    "table, message",
    [
        ('selct = ["DDP004"]', "unknown key 'selct' in [tool.ddpify] (did you mean 'select'?)"),
        ('per-file-ignore = {"a.py" = ["DDP004"]}', "unknown key 'per-file-ignore' in [tool.ddpify] (did you mean 'per-file-ignores'?)"),
        ('ignore = ["DDP999"]', "unknown rule DDP999 in [tool.ddpify] ignore (did you mean DDP009?)"),
        (
            '[tool.ddpify.per-file-ignores]\n"train.py" = ["DDP04"]',
            "unknown rule DDP04 in [tool.ddpify] per-file-ignores 'train.py' (did you mean DDP004?)",
        ),
    ],
    ids=["misspelt-select", "misspelt-per-file-ignores", "unknown-code", "unknown-code-per-file"],
)
def test_config_mistakes_are_exit_2(cli, project: Path, table: str, message: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.ddpify]\n{table}\n")
    result = cli("check", "--no-cache", "train.py", cwd=project)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line == f"ddpify: error: {project / 'pyproject.toml'}: {message}"
    assert "All checks passed" not in result.stdout


def test_rule_codes_come_from_the_rules_package() -> None:
    from ddpify.check.rules import BY_CODE

    assert set(rule_codes()) == {*BY_CODE, "DDP000"}


def test_validating_codes_imports_no_rule_and_no_libcst() -> None:
    code = (
        "import sys\n"
        "from ddpify.check.config import unknown_code\n"
        "assert unknown_code('DDP999') and not unknown_code('DDP0')\n"
        "assert 'libcst' not in sys.modules and 'ddpify.check.rules' not in sys.modules, sorted(sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_an_error_is_never_reported_as_success(cli, project: Path, output_format: str) -> None:
    (project / "broken.py").write_text("import torch.distributed\ndef f(:\n")
    alone = cli("check", "--no-cache", "--output-format", output_format, "broken.py", cwd=project)
    assert alone.returncode == 2
    assert "All checks passed" not in alone.stdout
    assert "broken.py:2:7: syntax error" in alone.stderr
    if output_format == "text":
        assert alone.stdout == "0 files checked.\n1 file could not be checked (errors on stderr).\n"
    both = cli("check", "--no-cache", "--output-format", output_format, ".", cwd=project)
    assert both.returncode == 2 and "DDP004" in both.stdout and "All checks passed" not in both.stdout
    if output_format == "text":
        assert "Found 1 finding.\n" in both.stdout and both.stdout.endswith("\n1 file could not be checked (errors on stderr).\n")


def test_rule_command_suggests_the_nearest_code(cli) -> None:
    result = cli("rule", "DDP99")
    assert result.returncode == 2
    assert result.stderr.strip() == "ddpify: error: unknown rule DDP99 (did you mean DDP009?) (see `ddpify rules`)"
