"""A training script written with CRLF line endings, tabs, a BOM, no final newline or another
declared encoding converts like its plain twin: lines ddpify does not touch come out byte for
byte as they went in, and the lines it adds follow the file's own conventions.

Method: convert the plain (LF, spaces, UTF-8) script once; the lines that difflib finds equal
between its input and output are the untouched ones. Then for every form F (a byte-level
transformation of the plain text) convert F(input) through the CLI and require
``output == F(plain output)`` and each untouched line of F(input) byte-identical in the output.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from ddpify.api import convert_source
from ddpify.cli import main

SCRIPT = '''\
"""A small regression trainer."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)  # the loss
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        if epoch % 2 == 0:
            loss = train(model, loader, optimizer)
        print(epoch, loss)
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
'''


def _tabs(text: str) -> str:
    return re.sub(r"(?m)^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), text)


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _no_final_newline(text: str) -> str:
    return text.rstrip("\n")


def _latin1_comment(text: str) -> str:  # the cookie line and a non-ASCII comment, both untouched
    return "# -*- coding: latin-1 -*-\n" + text.replace("# the loss", "# la fonction de coût, ½ MSE")


def _shift_jis_comment(text: str) -> str:
    return "# -*- coding: shift_jis -*-\n" + text.replace("# the loss", "# 損失関数")


FORMS: dict[str, tuple[Callable[[str], str], str, bool]] = {
    # name: (text transformation, encoding, BOM)
    "crlf": (_crlf, "utf-8", False),
    "tabs": (_tabs, "utf-8", False),
    "bom": (lambda t: t, "utf-8", True),
    "no-final-newline": (_no_final_newline, "utf-8", False),
    "latin-1": (_latin1_comment, "latin-1", False),
    "shift_jis": (_shift_jis_comment, "shift_jis", False),
    "all-at-once": (lambda t: _crlf(_tabs(_no_final_newline(t))), "utf-8", True),
}


def _bytes(text: str, encoding: str, bom: bool) -> bytes:
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode(encoding)


def _convert_file(tmp_path: Path, data: bytes, *extra: str) -> bytes:
    src = tmp_path / "train.py"
    src.write_bytes(data)
    out = tmp_path / "train_ddp.py"
    result = CliRunner().invoke(main, [str(src), "-o", str(out), "-q", *extra])
    assert result.exit_code == 0, result.output
    assert src.read_bytes() == data
    return out.read_bytes()


@pytest.fixture(scope="module")
def plain_output() -> str:
    output = convert_source(SCRIPT).output
    assert output != SCRIPT and "ddpify.distributed_loader(" in output
    return output


@pytest.mark.parametrize("form", list(FORMS))
def test_form_survives_conversion(tmp_path: Path, plain_output: str, form: str) -> None:
    transform, encoding, bom = FORMS[form]
    data_in = _bytes(transform(SCRIPT), encoding, bom)
    data_out = _convert_file(tmp_path, data_in)

    assert data_out == _bytes(transform(plain_output), encoding, bom)

    # Untouched lines, byte for byte (splitting keeps each line's own ending).
    lines_in = data_in.splitlines(keepends=True)
    lines_out = data_out.splitlines(keepends=True)
    plain_in, plain_out = SCRIPT.splitlines(), plain_output.splitlines()
    shift = len(lines_in) - len(plain_in)  # a cookie line added by the form
    untouched = 0
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, plain_in, plain_out, autojunk=False).get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                assert lines_in[i1 + k + shift] == lines_out[j1 + k + shift], (form, i1 + k + 1)
                untouched += 1
    assert untouched > len(plain_in) * 2 // 3
    if shift:
        assert lines_out[0] == lines_in[0]  # the cookie
    if bom:
        assert data_out.startswith(b"\xef\xbb\xbf") and not data_out.startswith(b"\xef\xbb\xbf" * 2)
    if "\r\n" in transform("\n"):
        assert data_out.count(b"\n") == data_out.count(b"\r\n")  # no bare LF among the added lines

    # Converting the result again changes nothing, at the byte level.
    assert _convert_file(tmp_path, data_out) == data_out


@pytest.mark.parametrize("form", list(FORMS))
def test_form_without_training_code_is_byte_identical(tmp_path: Path, form: str) -> None:
    transform, encoding, bom = FORMS[form]
    library = SCRIPT.replace("DataLoader", "Loader").replace("torch.optim.SGD", "make_optimizer").replace(".backward()", ".detach()")
    data = _bytes(transform(library), encoding, bom)
    assert _convert_file(tmp_path, data) == data
