"""``ddpify check`` end to end through the CLI: exit codes, selection, output formats, fixes,
suppressions, configuration and file discovery."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BUGGY = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
state = torch.load("ckpt.pt")
torch.save(state, "copy.pt")
dist.destroy_process_group()
"""
CLEAN = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
state = torch.load("ckpt.pt", map_location="cpu")
if dist.get_rank() == 0:
    torch.save(state, "copy.pt")
dist.destroy_process_group()
"""
SINGLE_GPU = "import torch\nprint(torch.zeros(1).cuda())\n"
# DDP004 and DDP005 are opt-in rules: the projects below turn them on in their configuration.
OPT_IN = '[tool.ddpify]\nextend-select = ["DDP004", "DDP005"]\n'


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddpify", "check", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(OPT_IN)
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "single.py").write_text(SINGLE_GPU)
    return tmp_path


def test_findings_exit_1_sorted_one_based(project: Path) -> None:
    result = run("buggy.py", "clean.py", "single.py", cwd=project)
    assert result.returncode == 1
    lines = [l for l in result.stdout.splitlines() if l.startswith("buggy.py")]
    assert lines == [
        "buggy.py:5:9: DDP004 " + lines[0].split(" DDP004 ")[1],
        "buggy.py:6:1: DDP005 " + lines[1].split(" DDP005 ")[1],
    ]
    assert "clean.py" not in result.stdout and "single.py" not in result.stdout


def test_clean_and_empty_exit_0(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert run("clean.py", "single.py", cwd=project).returncode == 0
    empty = tmp_path_factory.mktemp("empty")
    result = run(cwd=empty)
    assert result.returncode == 0 and "All checks passed" in result.stdout


def test_a_folder_run_says_how_many_files_it_checked_and_skipped(project: Path) -> None:
    """A clean run over a folder shows that it looked at something: the distributed scripts it
    linted, and the plain scripts it skipped (DDP000 with --require-ddp)."""
    (project / "buggy.py").unlink()
    (project / "notes.py").write_text("x = 1\n")
    clean = run(".", cwd=project)
    assert clean.returncode == 0
    assert clean.stdout == "1 file checked, 2 skipped (not distributed scripts; --require-ddp reports them).\nAll checks passed.\n"
    required = run(".", "--require-ddp", cwd=project)
    assert required.stdout.endswith("3 files checked.\nFound 2 findings.\n")
    empty = project / "empty"
    empty.mkdir()
    assert run("empty", cwd=project).stdout == "0 files checked.\nAll checks passed.\n"


def test_errors_exit_2(project: Path) -> None:
    (project / "broken.py").write_text("import torch.distributed as dist\ndef (:\n")
    broken = run("broken.py", cwd=project)
    assert broken.returncode == 2 and "broken.py:2:" in broken.stderr and "Traceback" not in broken.stderr
    assert run("missing.py", cwd=project).returncode == 2
    assert run("--output-format", "xml", cwd=project).returncode == 2


def test_require_ddp_flags_single_gpu_scripts(project: Path) -> None:
    result = run("single.py", "--require-ddp", cwd=project)
    assert result.returncode == 1 and "single.py:1:1: DDP000" in result.stdout


def test_select_and_ignore_take_codes_and_prefixes(project: Path) -> None:
    only_load = run("buggy.py", "--select", "DDP004", cwd=project)
    assert "DDP004" in only_load.stdout and "DDP005" not in only_load.stdout
    none = run("buggy.py", "--ignore", "DDP00", cwd=project)
    assert none.returncode == 0
    both = run("buggy.py", "--select", "DDP004,DDP005", cwd=project)
    assert "DDP004" in both.stdout and "DDP005" in both.stdout


def test_exit_zero_and_statistics(project: Path) -> None:
    assert run("buggy.py", "--exit-zero", cwd=project).returncode == 0
    stats = run("buggy.py", "--statistics", cwd=project)
    assert stats.returncode == 1
    assert [l.split()[:2] for l in stats.stdout.splitlines()] == [["1", "DDP004"], ["1", "DDP005"]]


def test_default_rules_extend_select_and_select_all(project: Path) -> None:
    (project / "pyproject.toml").unlink()
    default = run("buggy.py", cwd=project).stdout  # DDP004/DDP005 are on by default, DDP030 is opt-in
    assert "DDP004" in default and "DDP005" in default and "DDP030" not in default
    extended = run("buggy.py", "--extend-select", "DDP030", "--ignore", "DDP005", cwd=project)
    assert "DDP004" in extended.stdout and "DDP005" not in extended.stdout
    everything = run("buggy.py", "--select", "DDP", cwd=project)
    assert "DDP004" in everything.stdout and "DDP005" in everything.stdout and "DDP030" not in everything.stdout
    assert run("buggy.py", "--extend-select", "DDP99", cwd=project).returncode == 2


def test_fix_rewrites_in_plain_pytorch_and_diff_does_not(project: Path) -> None:
    diff = run("buggy.py", "--diff", cwd=project)
    assert diff.returncode == 1 and "+if not dist.is_initialized() or dist.get_rank() == 0:" in diff.stdout
    assert "map_location" not in diff.stdout  # that fix is unsafe here: `state` is used directly
    assert (project / "buggy.py").read_text() == BUGGY
    fixed = run("buggy.py", "--fix", cwd=project)
    assert fixed.returncode == 1, fixed.stdout  # the unsafe DDP004 fix is left
    assert "DDP004" in fixed.stdout and "1 more fixable with --unsafe-fixes" in fixed.stdout
    text = (project / "buggy.py").read_text()
    assert "ddpify" not in text and '    torch.save(state, "copy.pt")' in text
    unsafe = run("buggy.py", "--fix", "--unsafe-fixes", cwd=project)
    assert unsafe.returncode == 0, unsafe.stdout
    text = (project / "buggy.py").read_text()
    assert 'torch.load("ckpt.pt", map_location="cpu")' in text and "ddpify" not in text
    assert run("buggy.py", cwd=project).returncode == 0


def test_noqa_on_any_line_of_a_multiline_statement(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(OPT_IN)
    (tmp_path / "s.py").write_text(
        "import torch\nimport torch.distributed as dist\n"
        "torch.save(\n    {},  # noqa: DDP005\n    'x.pt',\n)\n"
        "state = torch.load('a.pt')  # ddpify: ignore[DDP004]\n"
        "state = torch.load('b.pt')  # noqa\n"
        "state = torch.load('c.pt')  # noqa: DDP005\n"
    )
    result = run("s.py", cwd=tmp_path)
    assert result.stdout.count("DDP0") == 1 and "s.py:9:" in result.stdout


def test_output_formats(project: Path) -> None:
    data = json.loads(run("buggy.py", "--output-format", "json", cwd=project).stdout)
    assert [(d["code"], d["line"], d["column"]) for d in data] == [("DDP004", 5, 9), ("DDP005", 6, 1)]
    assert [d["severity"] for d in data] == ["warning", "error"]
    github = run("buggy.py", "--output-format", "github", cwd=project).stdout.splitlines()
    assert github[0].startswith("::warning title=DDP004,file=buggy.py,line=5,col=9::")
    assert github[1].startswith("::error title=DDP005,file=buggy.py,line=6,col=1::")  # the rule's severity, as in SARIF


def test_config_found_upwards_with_per_file_ignores_and_exclude(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ddpify]\nextend-select = ["DDP004", "DDP005"]\nignore = ["DDP005"]\nexclude = ["vendor"]\n'
        '[tool.ddpify.per-file-ignores]\n"legacy/*" = ["DDP004"]\n'
    )
    for folder in ("src", "legacy", "vendor"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(BUGGY)
    result = run(".", cwd=tmp_path / "src")
    assert "DDP004" in result.stdout and "DDP005" not in result.stdout
    whole = run(".", cwd=tmp_path)
    assert "src/train.py:5:9: DDP004" in whole.stdout
    assert "legacy" not in whole.stdout and "vendor" not in whole.stdout


def test_gitignored_files_are_skipped(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "train.py").write_text(BUGGY)
    (tmp_path / "train.py").write_text(BUGGY)
    result = run(".", "--extend-select", "DDP004", cwd=tmp_path)
    assert "train.py:5:9" in result.stdout and "generated" not in result.stdout


def test_rules_and_rule_commands(tmp_path: Path) -> None:
    listing = subprocess.run([sys.executable, "-m", "ddpify", "rules"], capture_output=True, text=True, timeout=60)
    codes = [line.split()[0] for line in listing.stdout.splitlines()]
    assert codes == sorted(codes) and "DDP001" in codes and len(codes) >= 5
    explained = subprocess.run([sys.executable, "-m", "ddpify", "rule", "ddp004"], capture_output=True, text=True, timeout=60)
    assert explained.returncode == 0 and "map_location" in explained.stdout and "```python" in explained.stdout
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Known false positives"):
        assert f"### {heading}" in explained.stdout
    assert "(default)" in explained.stdout.splitlines()[0]
    opt_in = subprocess.run([sys.executable, "-m", "ddpify", "rule", "DDP030"], capture_output=True, text=True, timeout=60)
    assert "(opt-in)" in opt_in.stdout.splitlines()[0] and "--extend-select DDP030" in opt_in.stdout
    assert "default " in listing.stdout and "opt-in " in listing.stdout
    unknown = subprocess.run([sys.executable, "-m", "ddpify", "rule", "DDP999"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2
