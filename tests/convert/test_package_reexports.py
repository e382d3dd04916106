"""Issue 20 (unseen20m's dcgan_lynnho, pylib): a package whose ``__init__.py`` star-imports its
own modules (``from pylib.argument import *``), one of which names a function twice (``arg =
argument``) and writes through a third module (``args_to_yaml`` calls
``serialization.save_yaml``). The alias is that function, so ``py.arg(...)`` is no unknown side
effect to report (the report once told to run the argument parser's builder on rank 0 only);
the re-export costs no import level, so the write two modules down is seen and guarded to rank 0
(settings.yml was written by every rank)."""

from __future__ import annotations

from pathlib import Path

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import pylib as py

py.arg("--lr", type=float, default=0.1)
args = py.args()
py.args_to_yaml("settings.yml", args)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
loader = torch.utils.data.DataLoader(torch.randn(32, 4), batch_size=8, shuffle=True)
for epoch in range(2):
    for x in loader:
        model(x).sum().backward()
        optimizer.step()
"""


def test_a_packages_aliases_and_star_exports_are_read_through(tmp_path: Path) -> None:
    package = tmp_path / "pylib"
    (tmp_path / "setup.py").write_text("", encoding="utf-8")  # the repository root
    package.mkdir()
    (package / "__init__.py").write_text("from pylib.argument import *\nfrom pylib.serialization import *\n", encoding="utf-8")
    (package / "argument.py").write_text(
        "import argparse\n\nfrom pylib import serialization\n\nPARSER = argparse.ArgumentParser()\n\n\n"
        "def argument(*args, **kwargs):\n    PARSER.add_argument(*args, **kwargs)\n\n\narg = argument\n\n\n"
        "def args():\n    return PARSER.parse_args()\n\n\n"
        "def args_to_yaml(path, namespace):\n    serialization.save_yaml(path, vars(namespace))\n",
        encoding="utf-8",
    )
    (package / "serialization.py").write_text(
        "def save_yaml(path, data):\n    with open(path, 'w') as f:\n        f.write(str(data))\n", encoding="utf-8"
    )
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    result = convert_source(_SCRIPT, filename=str(script))
    assert not [m for m in result.manual if "py.arg" in m.why], [m.why for m in result.manual]
    assert "if ddpify.is_main_process():\n    py.args_to_yaml(" in result.output
