"""A set turned into an order in a module of the project (unseen20k's pygcn_train, found by its
judge): the conversion does not rewrite that module, so the script sets up with
``ddpify.setup(same_string_hashes=True)`` (each rank restarts once with one string-hash seed).
Spellings of the ordering: through a name bound to the set, ``list(set(...))``, a function of the
module that calls one that orders, a class whose method does. Not: ``sorted(set(...))`` (an
order already), a set only tested for membership."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import torch.nn as nn

from data_utils import {name}

{call}
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
"""
_MODULE = """\
def number(labels):
    classes = set(labels)
    return {c: i for i, c in enumerate(classes)}


def vocabulary(words):
    return list(set(words))


def load(path):
    return number(open(path).read().split())


def sorted_vocabulary(words):
    return sorted(set(words))


def known(words, word):
    return word in set(words)


class Corpus:
    def __init__(self, words):
        self.index = self.build(words)

    def build(self, words):
        return {w: i for i, w in enumerate(set(words))}
"""


@pytest.mark.parametrize(
    ("name", "call", "restarts"),
    [
        ("number", "index = number(names)", True),
        ("vocabulary", "vocab = vocabulary(words)", True),
        ("load", "index = load('labels.txt')", True),
        ("Corpus", "corpus = Corpus(words)", True),
        ("sorted_vocabulary", "vocab = sorted_vocabulary(words)", False),
        ("known", "seen = known(words, 'cat')", False),
    ],
)
def test_a_set_ordered_in_the_project_sets_one_hash_seed(tmp_path: Path, name: str, call: str, restarts: bool) -> None:
    (tmp_path / "setup.py").touch()
    (tmp_path / "data_utils.py").write_text(_MODULE)
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(name=name, call=call))
    output = convert_source(script.read_text(), filename=str(script)).output
    assert ("ddpify.setup(same_string_hashes=True)" in output) is restarts
    assert "ddpify.setup(" in output
