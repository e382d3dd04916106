"""A script whose training lives in a module of its project (issue 20, class 1): the module is
converted alongside into ``<name>_ddp.py`` and the script's import reads it; the inputs stay
untouched, a file of the user's is never overwritten, converting again changes nothing."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from ddpify import companions
from ddpify.api import convert_source

PROJECT = Path(__file__).resolve().parents[1] / "e2e" / "data" / "trainer_module_project"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("main.py", "trainer.py", "data_loader.py"):
        shutil.copy(PROJECT / name, tmp_path / name)
    return tmp_path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_training_module_is_converted_alongside(cli, project: Path) -> None:
    before = _snapshot(project)
    result = cli("main.py", "-o", "main_ddp.py", cwd=project)
    assert result.returncode == 0, result.stderr
    assert {name: data for name, data in _snapshot(project).items() if name in before} == before  # inputs untouched
    script = (project / "main_ddp.py").read_text()
    assert "from trainer_ddp import Trainer" in script and "from data_loader import get_loader" in script
    assert "    with ddpify.distributed():\n        main()" in script  # the script is converted too
    module = (project / "trainer_ddp.py").read_text()
    assert "self.model = ddpify.prepare_model(self.model)" in module and "self.loader = ddpify.shard(self.loader)" in module
    assert "ddpify.set_epoch(self.loader, epoch)" in module
    assert not (project / "data_loader_ddp.py").exists()  # it trains nothing: its loader is sharded where it is trained on
    assert "L6    training is done by Trainer.train() of trainer.py: converted alongside into trainer_ddp.py" in result.stderr
    assert "ddpify: trainer.py -> trainer_ddp.py: " in result.stderr.replace(str(project) + "/", "")
    assert result.stderr.count("launch:") == 1  # the script is what is launched


def test_converting_again_changes_nothing(cli, project: Path) -> None:
    assert cli("main.py", "-o", "main_ddp.py", cwd=project).returncode == 0
    again = cli("main_ddp.py", "-o", "main_ddp2.py", cwd=project)
    assert again.returncode == 0, again.stderr
    assert (project / "main_ddp2.py").read_bytes() == (project / "main_ddp.py").read_bytes()
    assert not (project / "trainer_ddp_ddp.py").exists()


def test_stdout_and_diff_say_what_to_run(cli, project: Path) -> None:
    before = _snapshot(project)
    for args in (("main.py",), ("main.py", "--diff")):
        result = cli(*args, cwd=project)
        assert result.returncode == 0, result.stderr
        assert "training is done by Trainer.train() of trainer.py, which is converted only when the result is written" in result.stderr
        assert "run `ddpify main.py -o main_ddp.py`: trainer.py is then converted alongside into trainer_ddp.py" in result.stderr
    assert _snapshot(project) == before


def test_a_file_of_the_user_is_never_overwritten(cli, project: Path) -> None:
    (project / "trainer_ddp.py").write_text("# my own distributed trainer\n")
    result = cli("main.py", "-o", "main_ddp.py", cwd=project)
    assert result.returncode == 2
    assert "trainer_ddp.py: exists and is not a ddpify conversion of trainer.py; nothing written" in result.stderr
    assert (project / "trainer_ddp.py").read_text() == "# my own distributed trainer\n"
    assert not (project / "main_ddp.py").exists()


_TRAINER = """\
import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, batches):
        for x in batches:
            self.model(x).sum().backward()
            self.optimizer.step()


def train_one_epoch(model, optimizer, batches):
    for x in batches:
        model(x).sum().backward()
        optimizer.step()


def describe(model):
    return str(model)
"""


@pytest.mark.parametrize(
    ("layout", "script", "expected"),
    [
        ("trainer.py", "from trainer import Trainer\nTrainer(net).fit(data)", "from trainer_ddp import Trainer"),
        ("trainer.py", "import trainer\ntrainer.Trainer(net).fit(data)", "import trainer_ddp as trainer"),
        ("trainer.py", "import trainer as t\nt.Trainer(net).fit(data)", "import trainer_ddp as t"),
        ("trainer.py", "from trainer import Trainer as T\nT(net).fit(data)", "from trainer_ddp import Trainer as T"),
        ("trainer.py", "from trainer import train_one_epoch\ntrain_one_epoch(net, opt, data)", "from trainer_ddp import train_one_epoch"),
        ("engine/trainer.py", "from engine.trainer import Trainer\nTrainer(net).fit(data)", "from engine.trainer_ddp import Trainer"),
        ("engine/trainer.py", "from engine import trainer\ntrainer.Trainer(net).fit(data)", "from engine import trainer_ddp as trainer"),
    ],
)
def test_import_spellings(tmp_path: Path, layout: str, script: str, expected: str) -> None:
    module = tmp_path / layout
    module.parent.mkdir(parents=True, exist_ok=True)
    if module.parent != tmp_path:
        (module.parent / "__init__.py").write_text("")
    module.write_text(_TRAINER)
    text = script + "\n"
    found = companions.training_modules(text, tmp_path / "main.py")
    assert [m.file for m in found] == [module]
    redirected = companions.redirected(convert_source(text), found)
    assert expected in redirected.output
    assert len(redirected.changes) == 1


@pytest.mark.parametrize(
    "script",
    [
        "from trainer import describe\nprint(describe(net))",  # imports what does not train
        "import torch\nfrom trainer import train_one_epoch\nmodel = torch.nn.Linear(2, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(2):\n    train_one_epoch(model, optimizer, data)\n",  # trains here: converted here
    ],
)
def test_no_module_converted_alongside(cli, tmp_path: Path, script: str) -> None:
    (tmp_path / "trainer.py").write_text(_TRAINER)
    (tmp_path / "main.py").write_text(textwrap.dedent(script))
    result = cli("main.py", "-o", "main_ddp.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "trainer_ddp.py").exists()
    assert "trainer_ddp" not in (tmp_path / "main_ddp.py").read_text()


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("from .trainer import Trainer\nTrainer(net).fit(data)", "from .trainer_ddp import Trainer"),
        ("from . import trainer\ntrainer.Trainer(net).fit(data)", "from . import trainer_ddp as trainer"),
    ],
)
def test_relative_import_spellings(tmp_path: Path, script: str, expected: str) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "trainer.py").write_text(_TRAINER)
    found = companions.training_modules(script + "\n", package / "main.py")
    assert [m.file for m in found] == [package / "trainer.py"]
    assert expected in companions.redirected(convert_source(script + "\n"), found).output


BUILDS_LOADER = Path(__file__).resolve().parents[1] / "e2e" / "data" / "trainer_builds_loader_project"

_FIT_MODULE = """\
import torch.nn.functional as F
from torch.utils.data import DataLoader


def fit(model, optimizer, dataset, epochs):
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
    return model.state_dict()
"""


@pytest.mark.parametrize(
    "hand_over",
    [
        "trainer = Trainer(encoder=encoder, head=head, optimizer=optimizer, batch_size=8, epochs=2, out_dir='runs')\n"
        "trainer.train(dataset)",
        "Trainer(encoder, head, optimizer, 8, 2, 'runs').train(dataset)",  # positional, never named
    ],
)
def test_a_trainer_given_wrapped_models_shards_the_loader_it_builds(cli, tmp_path: Path, hand_over: str) -> None:
    """The script wraps the models it builds the optimizer for and hands them to a trainer that
    builds its own loader (PyTorch-BYOL): the trainer's module is converted alongside, knowing
    its models are DDP models (its loader sharded, their state saved unwrapped)."""
    for name in ("trainer.py", "utils.py"):
        shutil.copy(BUILDS_LOADER / name, tmp_path / name)
    main = (BUILDS_LOADER / "main.py").read_text()
    main = main.replace(main[main.index("trainer = Trainer(") :], hand_over + "\n")
    (tmp_path / "main.py").write_text(main)
    result = cli("main.py", "-o", "main_ddp.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "needs a human" not in result.stderr, result.stderr
    module = (tmp_path / "trainer_ddp.py").read_text()
    assert "loader = ddpify.distributed_loader(dataset" in module and "ddpify.set_epoch(loader, epoch)" in module
    assert "ddpify.unwrap(self.encoder).state_dict()" in module and "prepare_model" not in module


def test_a_training_function_given_a_wrapped_model_shards_the_loader_it_builds(cli, tmp_path: Path) -> None:
    (tmp_path / "fitting.py").write_text(_FIT_MODULE)
    (tmp_path / "main.py").write_text(
        textwrap.dedent(
            """\
            import torch
            from torch.utils.data import TensorDataset

            from fitting import fit

            dataset = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
            model = torch.nn.Linear(4, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            state = fit(model, optimizer, dataset, 2)
            torch.save(state, "model.pt")
            """
        )
    )
    result = cli("main.py", "-o", "main_ddp.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    module = (tmp_path / "fitting_ddp.py").read_text()
    assert "loader = ddpify.distributed_loader(dataset, batch_size=8, shuffle=True)" in module
    assert "return ddpify.unwrap(model).state_dict()" in module and "prepare_model" not in module
    assert "model = ddpify.prepare_model(model" in (tmp_path / "main_ddp.py").read_text()


def test_a_module_with_several_training_classes_names_none_as_the_one(tmp_path: Path) -> None:
    """domainbed's ``algorithms.py``: the run picks its algorithm class by name, so the report
    says which classes train instead of naming one the run may not use."""
    from ddpify import companions

    classes = "".join(
        f"class {name}(torch.nn.Module):\n    def update(self, x):\n        self.opt.zero_grad()\n        self.net(x).sum().backward()\n"
        "        self.opt.step()\n\n\n"
        for name in ("ERM", "DANN", "MLDG")
    )
    (tmp_path / "algorithms.py").write_text("import torch\n\n\n" + classes)
    script = tmp_path / "train.py"
    text = "import algorithms\n\nalgorithm = vars(algorithms)[name](cfg)\nalgorithm.update(x)\n"
    script.write_text(text)
    [module] = companions.training_modules(text, script)
    assert module.trains == "whichever of its 3 training classes or functions the run uses (DANN, ERM, MLDG)"


def test_the_training_method_named_is_the_one_the_script_calls(tmp_path: Path) -> None:
    """stargan-v2's Solver: ``_reset_grad`` (zero_grad only, defined first) is a step of
    ``train``; the report names the public method a script calls, never the helper step."""
    (tmp_path / "solver.py").write_text(
        "import torch\n\n\nclass Solver(torch.nn.Module):\n"
        "    def _reset_grad(self):\n        for optim in self.optims.values():\n            optim.zero_grad()\n\n"
        "    def train(self, loader):\n        for x in loader:\n            self._reset_grad()\n"
        "            self.net(x).sum().backward()\n            self.optims.net.step()\n"
    )
    script = tmp_path / "main.py"
    text = "from solver import Solver\n\nsolver = Solver(args)\nsolver.train(loaders)\n"
    script.write_text(text)
    [module] = companions.training_modules(text, script)
    assert module.trains == "Solver.train()"
