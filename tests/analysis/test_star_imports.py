"""A name a script reads through ``from utils import *`` of a project module that imports it
(NRI's train.py: ``torch`` comes from ``utils.py``'s ``import torch``): qualified as that
import binds it, so ``torch.save`` / ``torch.load`` are known APIs (rank-0 saves, a
``map_location``), not project code. ``__all__``, private names, relative imports and
further star imports of project modules are honoured; a library's star import is not read."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ddpify.analysis import star_imports
from ddpify.api import convert_source
from ddpify.check.engine import check_source, select_rules
from ddpify.tree.qualified_names import QualifiedNames

_UTILS = """\
import os.path
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from . import sibling
import _private_lib
from more import *
"""
_MORE = "import pickle as pk\n"


def _names(tmp_path: Path, script: str, utils: str = _UTILS) -> dict[str, set[str]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "utils.py").write_text(utils)
    (tmp_path / "more.py").write_text(_MORE)
    path = tmp_path / "train.py"
    path.write_text(script)
    module = cst.parse_module(script)
    names = QualifiedNames(module, star_imports=star_imports.resolver(str(path)))
    found: dict[str, set[str]] = {}
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        expression = small.value if isinstance(small, cst.Expr) else None
        if isinstance(expression, cst.Call):
            found[cst.Module([]).code_for_node(expression.func)] = {q.name for q in names[expression.func]}
    return found


def test_library_names_a_star_import_brings(tmp_path: Path) -> None:
    script = "from utils import *\n\ntorch.save(x, 'a.pt')\nnp.save('a.npy', x)\nnn.Linear(2, 2)\nDataLoader(x)\nos.path.join('a')\npk.dump(x, f)\n"
    found = _names(tmp_path, script)
    assert found["torch.save"] == {"torch.save"}
    assert found["np.save"] == {"numpy.save"}
    assert found["nn.Linear"] == {"torch.nn.Linear"}
    assert found["DataLoader"] == {"torch.utils.data.DataLoader"}
    assert found["os.path.join"] == {"os.path.join"}
    assert found["pk.dump"] == {"pickle.dump"}  # through utils' own star import of a project module


def test_what_a_star_import_does_not_bring(tmp_path: Path) -> None:
    script = "from utils import *\n\n_private_lib.run()\nsibling.run()\ntorch.save(x, 'a.pt')\n"
    assert _names(tmp_path, script)["_private_lib.run"] == set()
    assert _names(tmp_path, script)["sibling.run"] == set()  # relative: not rebased
    limited = _names(tmp_path, script, utils=_UTILS + "__all__ = ['np']\n")
    assert limited["torch.save"] == set()  # __all__ leaves torch out


def test_a_name_the_file_binds_itself_counts(tmp_path: Path) -> None:
    script = "from utils import *\nimport mylib as torch\n\ntorch.save(x, 'a.pt')\n"
    assert "mylib.save" in _names(tmp_path, script)["torch.save"]  # both bindings, as for two imports of one name


def test_without_a_file_nothing_is_read() -> None:
    assert star_imports.resolver(None) is None


_TRAIN = """\
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset
from utils import *

model = torch.nn.Linear(4, 2)
optimizer = optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 2)), batch_size=8, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
    torch.save(model.state_dict(), "model.pt")
model.load_state_dict(torch.load("model.pt"))
"""


def test_a_conversion_reads_torch_through_the_star_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils.py").write_text("import torch\nimport numpy as np\n")
    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    result = convert_source(_TRAIN, filename=str(tmp_path / "train.py"))
    assert 'ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")' in result.output
    assert 'torch.load("model.pt", map_location=ddpify.device())' in result.output
    assert "checkpoint code in another file" not in "\n".join(c.what for c in result.changes)


def test_the_linter_reads_torch_through_the_star_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils.py").write_text("import torch\nimport torch.distributed as dist\n")
    script = "from utils import *\n\ndist.init_process_group('nccl')\nstate = torch.load('ckpt.pt')\n"
    (tmp_path / "train.py").write_text(script)
    monkeypatch.chdir(tmp_path)
    findings = check_source(script, "train.py", rules=select_rules(["DDP004"])).findings
    assert [f.code for f in findings] == ["DDP004"]
