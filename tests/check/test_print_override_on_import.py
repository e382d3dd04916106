"""Issue 21: a project module that replaces ``print`` for the other ranks when it is imported
(module-level ``builtins.print = rank0_print``, ``sys.stdout`` sent to devnull on ranks other
than 0): every print of a file that imports it, after the import, is rank 0's only, so DDP012
stays quiet there. Also through a package that re-exports such a module, and for ``from m
import f`` (importing a name runs the module). A module whose override sits in a function no
one calls silences nothing; a print above the import still runs on every rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_BUILTINS_OVERRIDE = """\
import builtins

import torch.distributed as dist

my_rank = -1
orig_print = builtins.print


def init_distributed(backend="gloo"):
    global my_rank
    dist.init_process_group(backend)
    my_rank = dist.get_rank()


def rank0_print(*args, **kwargs):
    if my_rank <= 0 or kwargs.pop("print_all", False):
        orig_print(*args, **kwargs)


builtins.print = rank0_print
"""

_STDOUT_OVERRIDE = """\
import os
import sys

import torch.distributed as dist

if int(os.environ.get("RANK", "0")) != 0:
    sys.stdout = open(os.devnull, "w")


def init_distributed(backend="gloo"):
    dist.init_process_group(backend)
"""

_NEVER_CALLED = """\
import builtins

import torch.distributed as dist


def init_distributed(backend="gloo"):
    dist.init_process_group(backend)


def quiet_others(rank):
    if rank != 0:
        builtins.print = lambda *args, **kwargs: None
"""

_SCRIPT = """\
import torch
{early}{imports}


def main():
    {init}
    model = torch.nn.Linear(2, 2)
    print("model", model)


if __name__ == "__main__":
    main()
"""

CASES = {
    "import_as": ("dist_utils.py", _BUILTINS_OVERRIDE, "import dist_utils as ext_dist", "ext_dist.init_distributed()", False),
    "from_import": ("dist_utils.py", _BUILTINS_OVERRIDE, "from dist_utils import init_distributed", "init_distributed()", False),
    "package_reexport": (
        "utils/printing.py",
        _BUILTINS_OVERRIDE,
        "from utils import init_distributed",
        "init_distributed()",
        False,
    ),
    "stdout_to_devnull": ("dist_utils.py", _STDOUT_OVERRIDE, "import dist_utils", "dist_utils.init_distributed()", False),
    "override_never_called": ("dist_utils.py", _NEVER_CALLED, "import dist_utils", "dist_utils.init_distributed()", True),
}


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[str, str, str, str, bool], early: str = "") -> list[int]:
    module, text, imports, init, _ = case
    target = tmp_path / module
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    if module.startswith("utils/"):
        (tmp_path / "utils" / "__init__.py").write_text("from .printing import *\n")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(early=early, imports=imports, init=init))
    monkeypatch.chdir(tmp_path)
    found = check_source(script.read_text(), "train.py", rules=select_rules(["DDP012"])).findings
    return [f.line for f in found]


@pytest.mark.parametrize("name", sorted(CASES))
def test_prints_after_importing_a_print_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    case = CASES[name]
    lines = _check(tmp_path, monkeypatch, case)
    assert bool(lines) is case[4], lines


def test_a_print_above_the_import_still_runs_on_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _check(tmp_path, monkeypatch, CASES["import_as"], early='print("starting")\n')
    assert lines == [2], lines


def test_a_package_that_star_exports_a_module_without_an_override_still_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of ``package_reexport``: the package's star re-export makes
    ``init_distributed`` known (a DDP script), and with no override its print is reported."""
    case = ("utils/printing.py", _NEVER_CALLED, "from utils import init_distributed", "init_distributed()", True)
    assert _check(tmp_path, monkeypatch, case) == [8]
