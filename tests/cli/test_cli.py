"""The command line: outputs, exit codes, and never losing or half-writing a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TRAINING = """\
import torch
from torch.utils.data import DataLoader

loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)
model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for batch in loader:
        optimizer.zero_grad()
        model(batch.float().unsqueeze(1)).sum().backward()
        optimizer.step()
"""


def ddpify(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ddpify", *args], input=stdin, capture_output=True, cwd=cwd, timeout=60
    )


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(TRAINING)
    return path


def test_output_file_written_and_report_on_stderr(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "train_ddp.py"
    result = ddpify(str(script), "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "ddpify.distributed_loader(" in text and "ddpify.setup()" in text
    report = result.stderr.decode()
    assert "L4" in report and "DistributedSampler" in report
    assert "torchrun --standalone --nproc_per_node=" in report
    assert script.read_text() == TRAINING  # input untouched


def test_stdout_and_stdin(script: Path) -> None:
    to_stdout = ddpify(str(script), "-q")
    from_stdin = ddpify("-", "-q", stdin=TRAINING.encode())
    assert to_stdout.returncode == from_stdin.returncode == 0
    assert b"ddpify.distributed_loader(" in to_stdout.stdout
    assert to_stdout.stdout == from_stdin.stdout
    assert to_stdout.stderr == b""


def test_diff_writes_nothing(script: Path, tmp_path: Path) -> None:
    result = ddpify(str(script), "--diff", "-q")
    assert result.returncode == 0
    assert b"+loader = ddpify.distributed_loader(" in result.stdout
    assert b"-loader = DataLoader(" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_in_place_rewrites_source(script: Path) -> None:
    result = ddpify(str(script), "--in-place", "-q")
    assert result.returncode == 0
    assert "ddpify.distributed_loader(" in script.read_text()
    assert [p.name for p in script.parent.iterdir()] == ["train.py"]  # no temp file left


def test_output_equal_to_input_is_refused(script: Path) -> None:
    result = ddpify(str(script), "-o", str(script))
    assert result.returncode == 2
    assert b"--in-place" in result.stderr
    assert script.read_text() == TRAINING


@pytest.mark.parametrize(
    "content, message",
    [
        (b"def broken(:\n    pass\n", b":1:"),
        (b"\x00\x01\x02binary", b"binary"),
        (b"x = '\xff\xfe'\n", b"cannot decode"),
    ],
    ids=["syntax-error", "binary", "not-utf8"],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, content: bytes, message: bytes) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(content)
    out = tmp_path / "out.py"
    result = ddpify(str(bad), "-o", str(out))
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert b"Traceback" not in result.stderr
    assert not out.exists()
    assert bad.read_bytes() == content


def test_missing_input_and_directory_input(tmp_path: Path) -> None:
    missing = ddpify(str(tmp_path / "nope.py"))
    directory = ddpify(str(tmp_path))
    assert missing.returncode == directory.returncode == 2
    assert b"no such file" in missing.stderr and b"directory" in directory.stderr


def test_unwritable_output_exits_2(script: Path, tmp_path: Path) -> None:
    result = ddpify(str(script), "-o", str(tmp_path / "no" / "such" / "dir" / "out.py"))
    assert result.returncode == 2
    assert b"cannot write" in result.stderr


def test_file_without_training_code_is_byte_identical(tmp_path: Path) -> None:
    source = b"import torch\r\n\r\ndef f(x):\r\n\treturn x.cuda()  # no training here\r\n"
    path = tmp_path / "util.py"
    path.write_bytes(source)
    out = tmp_path / "out.py"
    assert ddpify(str(path), "-o", str(out)).returncode == 0
    assert out.read_bytes() == source


def test_encoding_cookie_and_bom_survive(tmp_path: Path) -> None:
    latin = "# -*- coding: latin-1 -*-\n" + TRAINING + "# café\n"
    path = tmp_path / "latin.py"
    path.write_bytes(latin.encode("latin-1"))
    out = tmp_path / "out.py"
    assert ddpify(str(path), "-o", str(out)).returncode == 0
    assert "# café".encode("latin-1") in out.read_bytes()
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + TRAINING.encode())
    assert ddpify(str(bom), "-o", str(out)).returncode == 0
    assert out.read_bytes().startswith(b"\xef\xbb\xbfimport torch")


def test_usage_errors_exit_2(script: Path, tmp_path: Path) -> None:
    assert ddpify(str(script), "--in-place", "-o", str(tmp_path / "x.py")).returncode == 2
    assert ddpify(str(script), "--bogus").returncode == 2


def test_help_and_version_import_neither_torch_nor_libcst() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from ddpify.cli import main\n"
        "r = CliRunner().invoke(main, ['--version'])\n"
        "assert r.exit_code == 0 and '0.1' in r.output, r.output\n"
        "r = CliRunner().invoke(main, ['--help'])\n"
        "assert r.exit_code == 0 and 'Exit codes' in r.output\n"
        "assert 'torch' not in sys.modules and 'libcst' not in sys.modules, 'heavy import'\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0


def test_converting_never_imports_torch(script: Path) -> None:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['ddpify', {str(script)!r}, '-q']\n"
        "try:\n"
        "    runpy.run_module('ddpify', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "assert 'torch' not in sys.modules, 'the CLI imported torch'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert b"distributed_loader" in result.stdout


def test_output_that_would_not_parse_is_never_written(script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import libcst as cst
    from click.testing import CliRunner

    import ddpify.api
    from ddpify.cli import main

    class Breaking(ddpify.api.ConvertTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            return updated_node.with_changes(value="def") if updated_node.value == "loader" else updated_node

    monkeypatch.setattr(ddpify.api, "ConvertTransformer", Breaking)
    out = tmp_path / "out.py"
    result = CliRunner().invoke(main, [str(script), "-o", str(out)])
    assert result.exit_code == 3
    assert "would not parse" in result.output
    assert not out.exists()
    in_place = CliRunner().invoke(main, [str(script), "--in-place"])
    assert in_place.exit_code == 3 and script.read_text() == TRAINING


def test_wheel_ships_the_templates(tmp_path: Path) -> None:
    import zipfile

    root = Path(__file__).resolve().parents[2]
    build = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)],
                           cwd=root, capture_output=True, timeout=120)
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("ddpify-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ddpify/templates/snippets.py.j2" in names
    assert "ddpify/runtime/__init__.py" in names
    assert not any(n.startswith(("tests/", "examples/")) for n in names)
