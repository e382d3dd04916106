"""``sys.stdout = Logger(path)`` (a tee into a log file) and ``sys.stderr = open(path, "w")``
replace a process-wide stream. A no-op stand-in there would be the other ranks' stdout, which
libraries read (unseen20q's vae_lagging: sympy, loaded by torch's first optimizer, read
``sys.stdout.encoding`` and stopped rank 1). The assignment goes under ``if
ddpify.is_main_process():``; the other ranks keep their real stream. A logger kept in a
variable of its own stays ``ddpify.rank_zero(...)``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_LOGGER = '''import sys


class Logger:
    def __init__(self, path):
        self.terminal = sys.stdout
        self.log = open(path, "w")

    def write(self, message):
        self.terminal.write(message)
        self.log.write(message)
'''
_SCRIPT = '''import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

from logger import Logger

{replace}
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    print(epoch)
'''


@pytest.mark.parametrize(
    "replace",
    ['sys.stdout = Logger("train.log")', 'sys.stderr = Logger("errors.log")', 'sys.stdout = open("train.log", "w")', 'sys.stderr = open("err.txt", "a")'],
)
def test_a_replaced_stream_is_replaced_on_rank_zero_only(tmp_path: Path, replace: str) -> None:
    (tmp_path / "logger.py").write_text(_LOGGER)
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(replace=replace))
    result = convert_source(script.read_text(), filename=str(script))
    assert f"if ddpify.is_main_process():\n    {replace}\n" in result.output, result.output
    assert "ddpify.rank_zero(" not in result.output
    target = replace.split(" = ")[0]
    assert any(c.what.startswith(f"{target} = ") and "rank 0 only" in c.what for c in result.changes), result.changes
    assert convert_source(result.output, filename=str(script)).output == result.output


def test_a_logger_kept_in_its_own_variable_is_still_a_rank_zero_object(tmp_path: Path) -> None:
    (tmp_path / "logger.py").write_text(_LOGGER)
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(replace='log = Logger("train.log")'))
    result = convert_source(script.read_text(), filename=str(script))
    assert 'log = ddpify.rank_zero(Logger)("train.log")' in result.output, result.output
