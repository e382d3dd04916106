"""rewrites.with_runtime_import (AddImportsVisitor on the import prologue) gives exactly what
AddImportsVisitor gives on the whole module."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from ddpify.convert.rewrites import RUNTIME_IMPORT, with_runtime_import

ROOT = Path(__file__).resolve().parents[2]

CASES = {
    "empty": "",
    "no imports": "x = 1\nprint(x)\n",
    "only imports": "import os\nimport torch\n",
    "docstring": '"""Doc."""\nimport torch\n\nmodel = torch.nn.Linear(1, 1)\n',
    "strict flag": "__strict__ = True\nimport torch\nx = 1\n",
    "future and comments": "# header\nfrom __future__ import annotations\n\nimport torch  # why\n# lone\nx = torch.ones(1)\n",
    "late import": "import os\nx = 1\nimport ddpify.runtime as ddpify\n",
    "already there": "import torch\nimport ddpify.runtime as ddpify\n\nddpify.setup()\n",
    "concatenated docstring": '"a" "b"\nimport torch\ny = 2\n',
    "imports in a block": "try:\n    import torch\nexcept ImportError:\n    torch = None\nx = 1\n",
    "semicolons": "import os; import sys\nx = 1\n",
}


def _sources() -> list[tuple[str, str]]:
    files = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures" / "convert").rglob("input.py"))
    return list(CASES.items()) + [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in files]


SOURCES = _sources()


@pytest.mark.parametrize("name, source", SOURCES, ids=[name for name, _ in SOURCES])
def test_prologue_only_equals_whole_module(name: str, source: str) -> None:
    module = cst.parse_module(source)
    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, RUNTIME_IMPORT[0], asname=RUNTIME_IMPORT[1])
    expected = AddImportsVisitor(context).transform_module(module).code
    assert with_runtime_import(module).code == expected
