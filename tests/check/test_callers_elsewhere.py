"""Issue 21: a method the checked file never calls runs where the project files importing it
call it. DBNet's ``BaseTrainer._save_checkpoint`` (``torch.save`` in ``base/base_trainer.py``)
is called only by its subclass in ``trainer/trainer.py``, under ``if config['local_rank'] == 0``
(through the ``base`` package): no "save on every rank" (DDP005) in the base class. A call
without the rank test, or one more such call anywhere, keeps the finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_BASE = """\
import torch


class BaseTrainer:
    def __init__(self, config, model):
        self.config = config
        self.model = torch.nn.parallel.DistributedDataParallel(model)

    def _save_checkpoint(self, name):
        torch.save(self.model.module.state_dict(), name)
"""

_TRAINER = """\
import torch.distributed as dist

from base import BaseTrainer


class Trainer(BaseTrainer):
    def _on_epoch_finish(self, epoch):
        {call}
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("if dist.get_rank() == 0:\n            self._save_checkpoint('last.pt')", False),
        ("if self.config['rank'] != 0:\n            return\n        self._save_checkpoint('last.pt')", False),
        ("self._save_checkpoint('last.pt')", True),
        ("if dist.get_rank() == 0:\n            self._save_checkpoint('last.pt')\n        self._save_checkpoint('every.pt')", True),
    ],
)
def test_a_method_called_only_in_another_file_runs_where_that_call_runs(tmp_path: Path, call: str, reported: bool) -> None:
    (tmp_path / "setup.py").touch()
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "__init__.py").write_text("from .base_trainer import BaseTrainer\n")
    checked = tmp_path / "base" / "base_trainer.py"
    checked.write_text(_BASE)
    (tmp_path / "trainer.py").write_text(_TRAINER.format(call=call))
    found = {f.code for f in check_source(_BASE, str(checked), rules=select_rules(["DDP005"])).findings}
    assert ("DDP005" in found) is reported


def test_without_the_importing_file_the_method_runs_everywhere(tmp_path: Path) -> None:
    (tmp_path / "setup.py").touch()
    checked = tmp_path / "base_trainer.py"
    checked.write_text(_BASE)
    assert {f.code for f in check_source(_BASE, str(checked), rules=select_rules(["DDP005"])).findings} == {"DDP005"}


def test_a_module_imported_everywhere_reads_a_bounded_number_of_importers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forty importing files each calling sixty methods the checked module never calls itself:
    at most 32 importing files are read for the checked file (once each), and a method named in
    more than 16 of them is left where it is defined: the cost stays bounded (a pre-commit hook
    never waits on the whole project)."""
    import ddpify.analysis as analysis

    read: list[Path] = []
    real = analysis.called_at
    monkeypatch.setattr(analysis, "called_at", lambda file, with_imports: read.append(file) or real(file, with_imports))
    methods = [f"step_{i}" for i in range(60)]
    base = "import torch\n\n\nclass Base:\n    def __init__(self, model):\n        self.model = torch.nn.parallel.DistributedDataParallel(model)\n\n"
    base += "".join(f"    def {m}(self):\n        torch.save({{}}, '{m}.pt')\n\n" for m in methods)
    (tmp_path / "setup.py").touch()
    checked = tmp_path / "base.py"
    checked.write_text(base)
    for index in range(40):
        calls = "".join(f"        self.{m}()\n" for m in methods[index : index + 20])
        (tmp_path / f"user_{index}.py").write_text(f"from base import Base\n\n\nclass User{index}(Base):\n    def run(self):\n{calls}")
    check_source(base, str(checked), rules=select_rules(["DDP005"]))
    assert 0 < len(read) == len(set(read)) <= 32


def test_the_project_is_walked_once_per_checked_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package module imported by two hundred files, through a package that re-exports it,
    with sixty methods the checked file never calls: the search for importing files (five
    imports up) walks the project once, not once per method and per importing file (torchdrug's
    engine took 100 s before)."""
    from ddpify.analysis import project_files

    walks: list[Path] = []
    real = project_files._project_sources
    monkeypatch.setattr(project_files, "_project_sources", lambda root: walks.append(root) or real(root))
    methods = [f"step_{i}" for i in range(60)]
    base = "import torch\n\n\nclass Engine:\n    def __init__(self, model):\n        self.model = torch.nn.parallel.DistributedDataParallel(model)\n\n"
    base += "".join(f"    def {m}(self):\n        torch.save({{}}, '{m}.pt')\n\n" for m in methods)
    (tmp_path / "setup.py").touch()
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("from .engine import Engine\n")
    checked = tmp_path / "core" / "engine.py"
    checked.write_text(base)
    for index in range(200):
        (tmp_path / f"task_{index}.py").write_text(f"from core import Engine\nimport core\n\n\ndef run(e):\n    e.step_{index % 60}()\n")
    check_source(base, str(checked), rules=select_rules(["DDP005"]))
    assert len(walks) <= 3, len(walks)
