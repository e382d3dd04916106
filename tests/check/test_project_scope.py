"""Issue 21: a training script whose process group is set up by a helper of its own project
(``init_dist(args.launcher)``, ``utils.init_distributed_mode(args)``, a Trainer class that wraps
DDP) is a DDP script and is checked, though it never imports ``torch.distributed`` itself; a
file whose project helpers have nothing to do with DDP is not. The branch of an ``if`` that
joins the process group in its other branch only is the single-process run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import argparse

import torch
{imports}

parser = argparse.ArgumentParser()
parser.add_argument("--launcher", default="none")
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
{setup}
"""

_DIST_UTIL = """\
import os

import torch
import torch.distributed as dist


def _init_pytorch(backend="nccl"):
    torch.cuda.set_device(int(os.environ["RANK"]) % torch.cuda.device_count())
    dist.init_process_group(backend=backend)


def init_dist(launcher, backend="nccl"):
    if launcher == "pytorch":
        _init_pytorch(backend)
    else:
        raise ValueError(launcher)


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def accuracy(output, target):
    return (output.argmax(1) == target).float().mean()


class Trainer:
    def __init__(self, model):
        self.model = torch.nn.parallel.DistributedDataParallel(model)

    def step(self, x):
        return self.model(x)


class Meter:
    def __init__(self):
        self.total = 0
"""


def _findings(tmp_path: Path, module: str, imports: str, setup: str) -> list[tuple[str, int]]:
    target = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    target.parent.mkdir(parents=True, exist_ok=True)
    for package in target.parent.relative_to(tmp_path).parents:
        (tmp_path / package / "__init__.py").touch()
    (target.parent / "__init__.py").touch()
    target.write_text(_DIST_UTIL, encoding="utf-8")
    (tmp_path / "setup.py").write_text("", encoding="utf-8")  # the project's root
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(imports=imports, setup=setup), encoding="utf-8")
    result = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP"]), require_ddp=True)
    return [(f.code, f.line) for f in result.findings]


@pytest.mark.parametrize(
    ("module", "imports", "setup", "checked"),
    [
        # the process group is joined by a project helper: a DDP script
        ("basicsr.utils.dist_util", "from basicsr.utils.dist_util import init_dist", "init_dist(args.launcher)", True),
        ("utils", "import utils", "utils.init_dist(args.launcher)\nrank, world = utils.get_dist_info()", True),
        ("utils", "from utils import get_dist_info", "rank, world_size = get_dist_info()", True),
        ("engine.trainer", "from engine.trainer import Trainer", "trainer = Trainer(torch.nn.Linear(2, 2))", True),
        ("lib.dist", "from lib import dist as dist_utils", "dist_utils.init_dist('pytorch')", True),
        # helpers that have nothing to do with DDP: a single-GPU script (a word in a comment does not count)
        ("utils", "from utils import accuracy  # distributed later", "print(accuracy)", False),
        ("utils", "from utils import Meter  # not distributed yet", "meter = Meter()", False),
    ],
)
def test_setup_in_a_project_helper_makes_a_ddp_script(tmp_path: Path, module: str, imports: str, setup: str, checked: bool) -> None:
    codes = {code for code, _ in _findings(tmp_path, module, imports, setup)}
    assert ("DDP016" in codes) is checked  # the file's own --local_rank option, reported only in a DDP script
    assert ("DDP000" in codes) is not checked


@pytest.mark.parametrize(
    ("setup", "silent_line"),
    [
        ('if args.launcher == "none":\n    print("Disable distributed.")\nelse:\n    init_dist(args.launcher)', 11),
        ('if args.launcher != "none":\n    init_dist(args.launcher)\nelse:\n    print("one process")', 13),
        (
            'if args.launcher == "none":\n    print("one process")\nelif args.launcher == "slurm":\n    init_dist("slurm")\n'
            "else:\n    init_dist(args.launcher)",
            11,
        ),
        ('if args.config["dist"]:\n    init_dist(args.launcher)\nelse:\n    print("no launcher")', 13),
    ],
)
def test_the_branch_that_never_joins_is_the_single_process_run(tmp_path: Path, setup: str, silent_line: int) -> None:
    found = _findings(tmp_path, "utils", "from utils import init_dist", setup + '\nprint("every rank")')
    prints = [line for code, line in found if code == "DDP012"]
    assert silent_line not in prints
    assert prints == [len(setup.splitlines()) + 10]  # the print after the `if` runs on every rank


def test_both_branches_join_so_neither_is_single_process(tmp_path: Path) -> None:
    setup = 'if args.launcher == "slurm":\n    init_dist("slurm")\n    print("slurm")\nelse:\n    init_dist(args.launcher)'
    prints = [line for code, line in _findings(tmp_path, "utils", "from utils import init_dist", setup) if code == "DDP012"]
    assert prints == [12]


def test_the_command_line_checks_it_too_and_caches_on_the_helper(tmp_path: Path) -> None:
    """The cheap text filter of ``ddpify check`` (no parse for files that cannot be DDP
    scripts) reads the imported project modules too; a changed helper is checked again."""
    _findings(tmp_path, "basicsr.utils.dist_util", "from basicsr.utils.dist_util import init_dist", "init_dist(args.launcher)")
    command = [sys.executable, "-m", "ddpify", "check", "--exit-zero", "train.py"]
    first = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "DDP016" in first.stdout, first.stdout + first.stderr
    helper = tmp_path / "basicsr" / "utils" / "dist_util.py"
    helper.write_text("def init_dist(launcher):\n    return launcher\n", encoding="utf-8")
    second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "DDP016" not in second.stdout and "1 file checked" not in second.stdout, second.stdout


# ------------------------------------------------------------------ print overrides two modules away
_MISC = """\
import sys

import torch.distributed as dist


def _set_print_only_on_master_proc(is_master):
    import builtins as __builtin__

    builtin_print = __builtin__.print

    def prt(msg, *args, **kwargs):
        if is_master or kwargs.pop("force", False):
            builtin_print(msg, *args, **kwargs)

    {override}


def init_distributed_environ(exp_dir):
    dist.init_process_group("nccl")
    _set_print_only_on_master_proc(is_master=dist.get_rank() == 0)
"""

_ARG_UTIL = """\
def init_dist_and_get_args():
    {import_misc}
    misc.init_distributed_environ(exp_dir="out")
    return {{"lr": 0.1}}
"""

_MAIN = """\
import torch
import torch.distributed as dist
{import_args}


def main_pt():
    args = arg_util.init_dist_and_get_args()
    print(f"initial args: {{args}}")


if __name__ == "__main__":
    main_pt()
"""


@pytest.mark.parametrize(
    ("marker", "import_misc", "import_args", "override", "report"),
    [
        (None, "from utils import misc", "from utils import arg_util", "__builtin__.print = prt", False),
        ("setup.py", "from utils import misc", "from utils import arg_util", "__builtin__.print = prt", False),
        (".git", "import utils.misc as misc", "import utils.arg_util as arg_util", "setattr(__builtin__, 'print', prt)", False),
        (None, "from . import misc", "from utils import arg_util", "__builtin__.print = prt", False),
        (None, "from utils import misc", "from utils import arg_util", "builtin_print('no override')", True),
        ("setup.py", "from utils import misc", "from utils import arg_util", "prt('no override')", True),
    ],
)
def test_print_silenced_by_a_helper_two_modules_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str | None, import_misc: str, import_args: str, override: str, report: bool
) -> None:
    """``main.py`` in ``pretrain/`` (on ``sys.path`` when it runs) calls ``utils/arg_util.py``,
    whose function imports its sibling ``utils/misc.py`` through that folder, which replaces
    ``print`` for the other ranks: the script's prints are rank 0's only."""
    if marker is not None:
        (tmp_path / marker).mkdir() if marker == ".git" else (tmp_path / marker).write_text("")
    folder = tmp_path / "pretrain"
    (folder / "utils").mkdir(parents=True)
    (folder / "utils" / "__init__.py").write_text("")
    (folder / "utils" / "misc.py").write_text(_MISC.format(override=override))
    (folder / "utils" / "arg_util.py").write_text(_ARG_UTIL.format(import_misc=import_misc))
    script = folder / "main.py"
    script.write_text(_MAIN.format(import_args=import_args))
    monkeypatch.chdir(tmp_path)  # as pre-commit runs: from the repository's top
    findings = check_source(script.read_text(), "pretrain/main.py", rules=select_rules(["DDP012"])).findings
    assert bool(findings) is report
