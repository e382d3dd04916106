"""Reading the checked file's own project (issue 21): which imports resolve to project files,
what their helpers are summarised as, and that a changed helper is read again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import libcst as cst

from ddpify.analysis import summarise
from ddpify.analysis.project import Project
from ddpify.analysis.project_files import DEPTH, imported_files, imports, module_file, project_digest
from ddpify.analysis.ranks import RankSelection

HELPERS = """\
import builtins
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_of_this_process():
    return dist.get_rank()


def writes_files():
    return rank_of_this_process() == 0


def quiet(is_first):
    if not is_first:
        builtins.print = lambda *a, **k: None


def setup(args):
    dist.init_process_group("nccl")
    quiet(dist.get_rank() == 0)


def launch(fn, n):
    mp.spawn(fn, nprocs=n)
"""


def _project(tmp_path: Path, files: dict[str, str], text: str) -> Project:
    (tmp_path / "pyproject.toml").write_text("")
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    script = tmp_path / "scripts" / "train.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(text)
    return Project(lambda: text, str(script), DEPTH, summarise)


def _call(text: str) -> cst.Call:
    call = cst.parse_expression(text)
    assert isinstance(call, cst.Call)
    return call


def test_import_forms() -> None:
    found = imports("import a.b as c, d\nfrom ..x import (f,\n    g as h)\nfrom y import *\n")
    assert [(i.module, i.level, i.name, i.bound) for i in found] == [
        ("a.b", 0, None, "c"),
        ("d", 0, None, "d"),
        ("x", 2, "f", "f"),
        ("x", 2, "g", "h"),
    ]


def test_resolution_stays_in_the_repository(tmp_path: Path) -> None:
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "repo" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg" / "dist.py").write_text("")
    (tmp_path / "outside.py").write_text("")
    script = tmp_path / "repo" / "tools" / "train.py"
    script.parent.mkdir()
    script.write_text("")
    assert module_file("pkg.dist", 0, script) == tmp_path / "repo" / "pkg" / "dist.py"
    assert module_file("outside", 0, script) is None and module_file("torch", 0, script) is None
    assert imported_files("from pkg import dist\nimport torch\n", script) == [
        tmp_path / "repo" / "pkg" / "__init__.py",
        tmp_path / "repo" / "pkg" / "dist.py",
    ]


def test_helpers_are_summarised(tmp_path: Path) -> None:
    project = _project(tmp_path, {"utils/__init__.py": "from .core import writes_files\n", "utils/core.py": HELPERS}, "import utils.core as core\nimport utils\n")
    flag = project.helper(_call("utils.writes_files()"))
    assert flag is not None and flag.flag is not None and flag.flag.selection is RankSelection.MAIN
    setup = project.helper(_call("core.setup(args)"))
    assert setup is not None and setup.silences_print and setup.flag is None
    launch = project.helper(_call("core.launch(worker, 2)"))
    assert launch is not None and launch.spawns == 0
    assert project.helper(_call("core.missing()")) is None and project.helper(_call("torch.save(x)")) is None


def test_a_function_named_like_its_module_is_the_packages_re_export(tmp_path: Path) -> None:
    """TransReID's ``from datasets import make_dataloader`` where ``datasets/__init__.py`` does
    ``from .make_dataloader import make_dataloader``: the name is the function (a module is
    not called), so its facts come from the package's re-export."""
    loader = "import torch\n\n\ndef make_dataloader(cfg):\n    return torch.utils.data.DataLoader(cfg.data, num_workers=4, shuffle=True)\n"
    files = {"datasets/__init__.py": "from .make_dataloader import make_dataloader\n", "datasets/make_dataloader.py": loader}
    project = _project(tmp_path, files, "from datasets import make_dataloader\n")
    helper = project.helper(_call("make_dataloader(cfg)"))
    assert helper is not None and "torch" in helper.draws  # its loader workers draw from torch's RNG


def test_a_context_manager_that_sends_stdout_elsewhere(tmp_path: Path) -> None:
    """Large-Time-Series-Model's ``with HiddenPrints(local_rank):`` of ``utils/tools.py``: its
    ``__enter__`` assigns ``sys.stdout``, so prints in its block are not repeated per rank."""
    tools = (
        "import os\nimport sys\n\n\nclass HiddenPrints:\n    def __init__(self, rank):\n        self.rank = rank\n\n"
        "    def __enter__(self):\n        if self.rank == 0:\n            return\n        sys.stdout = open(os.devnull, 'w')\n\n"
        "    def __exit__(self, *exc):\n        pass\n\n\nclass Timer:\n    def __enter__(self):\n        return self\n"
    )
    project = _project(tmp_path, {"utils/__init__.py": "", "utils/tools.py": tools}, "from utils.tools import HiddenPrints, Timer\n")
    hidden, timer = project.named("HiddenPrints.__init__"), project.named("Timer.__init__")
    assert hidden is not None and hidden.redirects_stdout
    assert timer is not None and not timer.redirects_stdout


def test_opening_a_file_writes_only_with_a_writing_mode(tmp_path: Path) -> None:
    """Deep-SVDD's ``Config.load_config`` opens its JSON to read it: no write, so running it on
    every rank repeats nothing; ``open(p, "w")``, ``path.open("a")`` and a csv writer's
    ``writerow`` write."""
    helpers = (
        "import csv\nfrom pathlib import Path\n\n\ndef read_default(p):\n    return open(p).read()\n\n\n"
        "def read_mode(p):\n    with open(p, mode='r') as f:\n        return f.read()\n\n\n"
        "def write(p):\n    open(p, 'w').write('x')\n\n\ndef append(p):\n    with Path(p).open('a') as f:\n        pass\n\n\n"
        "def row(writer):\n    writer.writerow({'epoch': 1})\n"
    )
    project = _project(tmp_path, {"io_helpers.py": helpers}, "import io_helpers\n")
    writes = {name: project.helper(_call(f"io_helpers.{name}(p)")).writes for name in ("read_default", "read_mode", "write", "append", "row")}  # type: ignore[union-attr]
    assert writes == {"read_default": False, "read_mode": False, "write": True, "append": True, "row": True}


def test_a_folder_without_init_is_a_package(tmp_path: Path) -> None:
    """``from utils import misc`` where ``utils/`` has no ``__init__.py`` (a namespace package,
    as in VAR): the print override two modules away (``arg_util`` -> ``misc``, ``import
    builtins as __builtin__``) is still found."""
    misc = "import builtins as __builtin__\n\n\ndef _quiet(is_master):\n    if not is_master:\n        __builtin__.print = lambda *a, **k: None\n\n\ndef start(rank):\n    _quiet(rank == 0)\n"
    arg_util = "def init_and_get_args():\n    from utils import misc\n\n    misc.start(0)\n"
    project = _project(tmp_path, {"utils/misc.py": misc, "utils/arg_util.py": arg_util}, "from utils import arg_util\n")
    assert module_file("utils", 0, tmp_path / "scripts" / "train.py") == tmp_path / "utils" / "__init__.py"
    assert imported_files("from utils import misc\n", tmp_path / "scripts" / "train.py") == [tmp_path / "utils" / "misc.py"]
    helper = project.helper(_call("arg_util.init_and_get_args()"))
    assert helper is not None and helper.silences_print


def test_a_changed_helper_is_read_again(tmp_path: Path) -> None:
    text = "from helpers import writes_files\n"
    project = _project(tmp_path, {"helpers.py": HELPERS}, text)
    script = str(tmp_path / "scripts" / "train.py")
    before = project_digest(text, script)
    assert project.helper(_call("writes_files()")).flag is not None  # type: ignore[union-attr]
    helpers = tmp_path / "helpers.py"
    helpers.write_text(HELPERS.replace("return rank_of_this_process() == 0", "return True"))
    os.utime(helpers, ns=(1, 1))
    assert Project(lambda: text, script, DEPTH, summarise).helper(_call("writes_files()")).flag is None  # type: ignore[union-attr]
    assert project_digest(text, script) not in ("", before)


def test_importers_skip_hidden_environment_and_vanishing_folders(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The walk for a module's importers never enters ``.git`` or a virtual environment, and a
    folder that disappears while it is walked (another process's temporary files) is skipped
    rather than an error that stops the check."""
    from ddpify.analysis import project_files

    (tmp_path / "setup.py").touch()
    (tmp_path / "helper.py").write_text("x = 1\n", encoding="utf-8")
    for folder in (".git", "venv", "src", "gone"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "user.py").write_text("import helper\n", encoding="utf-8")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "gone":
            raise FileNotFoundError(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = project_files.importers(tmp_path / "helper.py")
    assert found == [tmp_path / "src" / "user.py"]


OUTPUT_HELPERS = """\
import torchvision.utils as vutils


def denormalize(x):
    out = (x + 1) / 2
    return out.clamp_(0, 1)


def save_image(x, ncol, filename):
    x = denormalize(x)
    vutils.save_image(x.cpu(), filename, nrow=ncol)


def scale_(x):
    x.mul_(2)


def save_scaled(x, filename):
    scale_(x)
    vutils.save_image(x, filename)


def save_through(x, filename, *rest):
    keep(*rest)
    save_scaled(x=x, filename=filename)


def keep(*items):
    items[0].append(1)


def countdown(model, n):
    return countdown(model, n - 1) if n else model.eval()
"""


@pytest.mark.parametrize(
    ("helper", "changes"),
    [
        ("denormalize", False),  # clamps its own copy
        ("save_image", False),  # hands x to denormalize, which only reads it (stargan-v2's utils)
        ("scale_", True),
        ("save_scaled", True),  # hands x to scale_, which changes it in place
        ("save_through", True),  # by keyword, two calls deep; and *rest into *items
        ("keep", True),  # items[0].append: an item of a parameter
        ("countdown", True),  # recursion ends; model.eval() without train()
    ],
)
def test_argument_changers_follow_the_module_own_calls(tmp_path: Path, helper: str, changes: bool) -> None:
    project = _project(tmp_path, {"out.py": OUTPUT_HELPERS}, "import out\n")
    found = project.helper(_call(f"out.{helper}(a, b)"))
    assert found is not None and found.changes_arguments is changes


def test_a_relative_script_path_finds_the_repository_root_above_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cd pygcn/pygcn && ddpify train.py``: ``from pygcn.utils import load_data`` resolves from
    the repository root above the working directory (unseen20k's pygcn_train, whose helper was
    not read when the script's path was relative)."""
    (tmp_path / "setup.py").touch()
    package = tmp_path / "pygcn"
    package.mkdir()
    (package / "__init__.py").touch()
    (package / "utils.py").write_text("def load_data():\n    return 1\n")
    (package / "train.py").write_text("from pygcn.utils import load_data\n")
    monkeypatch.chdir(package)
    found = imported_files("from pygcn.utils import load_data\n", Path("train.py"))
    assert [f.resolve() for f in found] == [(package / "utils.py").resolve()]
    assert found == [Path("utils.py")]  # named as given: below the working directory, relative to it


def test_a_dotted_module_no_search_path_reaches_is_the_one_file_ending_with_it(tmp_path: Path) -> None:
    """TorchSeg: config.py puts ``furnace/`` on sys.path in code no reading follows, and the
    train scripts ``from engine.engine import Engine``: the one ``engine/engine.py`` of the
    project. Not for two candidates, a single name, or an installed module."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for file in ("furnace/engine/engine.py", "furnace/engine/__init__.py", "furnace/utils/misc.py", "model/a/utils/misc.py", "lib/logger.py"):
        (repo / file).parent.mkdir(parents=True, exist_ok=True)
        (repo / file).write_text("x = 1\n")
    script = repo / "model" / "bisenet" / "train.py"
    script.parent.mkdir(parents=True)
    script.write_text("from engine.engine import Engine\n")
    assert module_file("engine.engine", 0, script) == repo / "furnace" / "engine" / "engine.py"
    assert module_file("engine", 0, script) is None  # a single name: too common to guess
    assert module_file("utils.misc", 0, script) is None  # two files end with utils/misc.py
    assert module_file("torch.nn", 0, script) is None  # installed
    assert repo / "furnace" / "engine" / "engine.py" in imported_files(script.read_text(), script)
