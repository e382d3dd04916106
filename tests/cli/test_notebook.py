"""Notebooks through the real CLI: ``ddpify nb.ipynb -o script.py`` (golden script and report),
``-o nb_ddp.ipynb`` (a notebook that writes and launches the script), ``ddpify check nb.ipynb``
(findings at ``cell_N:LINE:COL``), and malformed notebooks refused in one line.

Regenerate the goldens after an intended change with ``DDPIFY_UPDATE_GOLDENS=1``.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ddpify import notebook

DATA = Path(__file__).resolve().parent / "data" / "notebook"
UPDATE = os.environ.get("DDPIFY_UPDATE_GOLDENS") == "1"


def _golden(name: str, actual: str) -> None:
    path = DATA / name
    if UPDATE:
        path.write_text(actual)
    assert actual == path.read_text(), f"{name} differs (DDPIFY_UPDATE_GOLDENS=1 regenerates it)"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copy(DATA / "train.ipynb", tmp_path / "train.ipynb")
    return tmp_path


def _notebook(path: Path, *sources: str | list[str], kinds: tuple[str, ...] = ()) -> Path:
    cells = [
        {"cell_type": kinds[i] if i < len(kinds) else "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
        for i, source in enumerate(sources)
    ]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}))
    return path


def test_code_cells_become_one_script_with_ipython_lines_commented_out() -> None:
    """The notebook-to-script step alone: markers, magics, shell escapes, help, cell magics."""
    script = notebook.read(DATA / "train.ipynb")
    _golden("expected_cells.py", script.text)
    _golden("expected_notes.txt", "".join(f"cell_{n.cell}:{n.line}: {n.text}\n" for n in script.notes))
    lines = script.text.splitlines()
    assert script.locate(lines.index("# %%time") + 1) == (5, 1)  # script line -> (cell, line in the cell)


def test_notebook_converts_to_a_ddp_script_and_report(cli, workdir: Path) -> None:
    result = cli("train.ipynb", "-o", "train_ddp.py", cwd=workdir)
    assert result.returncode == 0, result.stderr
    _golden("expected_train_ddp.py", (workdir / "train_ddp.py").read_text())
    _golden("expected_report.txt", result.stderr)
    assert "display-only cell (`model`)" in result.stderr and "shell escape `!pip install" in result.stderr
    report = result.stderr.split("launch:")[0]
    assert "reach loss.backward() at cell_5:6)" in report
    assert not re.search(r"\blines? \d|\bL\d+\b", report), "a notebook's report cites cell_N:LINE only"
    assert cli("check", "--no-cache", "train_ddp.py", cwd=workdir).returncode == 0  # the result is clean DDP


def test_launcher_notebook_writes_the_script_and_launches_it(cli, workdir: Path) -> None:
    assert cli("train.ipynb", "-o", "train_ddp.py", "-q", cwd=workdir).returncode == 0
    result = cli("train.ipynb", "-o", "nb_ddp.ipynb", "-q", cwd=workdir)
    assert result.returncode == 0, result.stderr
    document = json.loads((workdir / "nb_ddp.ipynb").read_text())
    nbformat = _maybe_nbformat()
    if nbformat is not None:
        nbformat.validate(nbformat.reads((workdir / "nb_ddp.ipynb").read_text(), as_version=4))
    about, write, launch = ("".join(cell["source"]) for cell in document["cells"])
    assert write == "%%writefile nb_ddp.py\n" + (workdir / "train_ddp.py").read_text()
    assert "!torchrun --standalone --nproc_per_node={nproc} nb_ddp.py" in launch
    assert "torch.cuda.device_count()" in launch
    assert "Before launching" in about and "cell_2:2: shell escape" in about
    assert document["metadata"]["kernelspec"]["name"] == "python3"


def _maybe_nbformat():  # type: ignore[no-untyped-def]
    try:
        import nbformat
    except ImportError:  # the schema check needs the test extra; the rest does not
        return None
    return nbformat


@pytest.mark.torchrun
def test_launcher_notebook_cells_run_under_torchrun(cli, workdir: Path) -> None:
    """What Jupyter would do with the two cells: write the script, then torchrun on 2 CPU processes."""
    assert cli("train.ipynb", "-o", "nb_ddp.ipynb", "-q", cwd=workdir).returncode == 0
    cells = json.loads((workdir / "nb_ddp.ipynb").read_text())["cells"]
    header, _, body = "".join(cells[1]["source"]).partition("\n")
    (workdir / header.split()[1]).write_text(body)
    command = "".join(cells[2]["source"]).splitlines()[-1]
    assert command.startswith("!torchrun ")
    argv = command[1:].replace("{nproc}", "2").split()
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", *argv[1:]], cwd=workdir, capture_output=True, text=True, timeout=300, env=env
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("epoch 2: loss") == 1  # rank 0 prints, once
    assert (workdir / "model.pt").is_file()


def test_notebook_without_training_code_explains_why_nothing_is_launched(cli, tmp_path: Path) -> None:
    _notebook(tmp_path / "plot.ipynb", "import math\n", "math.pi")
    result = cli("plot.ipynb", "-o", "plot_ddp.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    cells = json.loads((tmp_path / "plot_ddp.ipynb").read_text())["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "code", "markdown"]
    assert "Not launched: ddpify found no training code" in "".join(cells[2]["source"])
    assert not any("torchrun" in "".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "invalid JSON at line 1"),
        ("[1, 2]", "no list of cells"),
        ('{"cells": [], "nbformat": 3}', "nbformat 3 is not supported"),
        ('{"cells": [{"source": "x = 1"}], "nbformat": 4}', "cell 1 has no cell_type"),
        ('{"cells": [{"cell_type": "code", "source": 42}], "nbformat": 4}', "source of cell 1 is neither"),
        (
            '{"cells": [{"cell_type": "markdown", "source": ""}, {"cell_type": "code", "source": ["x = (1,\\n", "def"]}], "nbformat": 4}',
            "bad.ipynb:cell_2:1:5: syntax error",
        ),
    ],
    ids=["not-json", "not-a-notebook", "nbformat-3", "no-cell-type", "bad-source", "syntax-error-in-a-cell"],
)
def test_malformed_notebook_is_refused_in_one_line(cli, tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text(content)
    for args in (["bad.ipynb", "-o", "out.py"], ["bad.ipynb", "-o", "out.ipynb"], ["check", "--no-cache", "bad.ipynb"]):
        result = cli(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("ddpify: error:")]
        assert len(errors) == 1 and message in errors[0], result.stderr
        assert "Traceback" not in result.stderr and "All checks passed" not in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ipynb"]
    assert bad.read_text() == content


def test_in_place_and_diff_on_a_notebook(cli, workdir: Path) -> None:
    before = (workdir / "train.ipynb").read_bytes()
    in_place = cli("train.ipynb", "--in-place", cwd=workdir)
    assert in_place.returncode == 2 and "--in-place cannot turn a notebook into a script" in in_place.stderr
    onto_itself = cli("train.ipynb", "-o", "./train.ipynb", cwd=workdir)
    assert onto_itself.returncode == 2 and "output is the input notebook" in onto_itself.stderr
    diff = cli("train.ipynb", "--diff", cwd=workdir)
    assert diff.returncode == 0
    assert "--- train.ipynb (code cells)" in diff.stdout and "+loader = ddpify.distributed_loader(" in diff.stdout
    assert (workdir / "train.ipynb").read_bytes() == before and sorted(p.name for p in workdir.iterdir()) == ["train.ipynb"]


BUGGY_CELLS = (
    "# DDP by hand",
    "import torch\nimport torch.distributed as dist\n%load_ext autoreload",
    "dist.init_process_group('gloo')\nstate = torch.load('ckpt.pt')\n",
)


def test_check_reports_findings_at_cell_and_line(cli, tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb", *BUGGY_CELLS, kinds=("markdown",))
    before = (tmp_path / "nb.ipynb").read_bytes()
    result = cli("check", "--no-cache", "--select", "DDP", "nb.ipynb", cwd=tmp_path)  # DDP004/DDP030 are opt-in
    assert result.returncode == 1, result.stderr
    assert "nb.ipynb:cell_3:2:9: DDP004 torch.load without map_location" in result.stdout
    assert "nb.ipynb:cell_3:1:1: DDP030" in result.stdout
    as_json = json.loads(cli("check", "--no-cache", "--select", "DDP", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert {(f["path"], f["line"], f["code"]) for f in as_json} >= {("nb.ipynb:cell_3", 2, "DDP004")}
    fixed = cli("check", "--no-cache", "--select", "DDP", "--fix", "nb.ipynb", cwd=tmp_path)  # notebooks are never rewritten
    assert fixed.returncode == 1 and "[*]" not in fixed.stdout
    assert (tmp_path / "nb.ipynb").read_bytes() == before


def test_check_folder_includes_notebooks_but_not_checkpoints(cli, tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb", *BUGGY_CELLS)
    (tmp_path / ".ipynb_checkpoints").mkdir()
    _notebook(tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb", *BUGGY_CELLS)
    result = cli("check", "--no-cache", "--extend-select", "DDP004", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "nb.ipynb:cell_3:2:9: DDP004" in result.stdout
    assert "checkpoint" not in result.stdout


def test_converting_a_py_file_never_loads_the_notebook_code(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['ddpify', {str(tmp_path / 'train.py')!r}, '-q']\n"
        "try:\n"
        "    runpy.run_module('ddpify', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "assert 'ddpify.notebook' not in sys.modules and 'nbformat' not in sys.modules\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0
