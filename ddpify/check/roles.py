"""What a name says about the data it holds: evaluation (``val_loader``, ``testset``,
``devDataset``) or training (``train_loader``)."""

from __future__ import annotations

import re

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

_EVAL_WORD = re.compile(r"^(val|valid|validation|test|testing|eval|evaluation|dev)(set|loader|data|dataset|ds|sampler|s)?\d*$")

_TRAIN_WORD = re.compile(r"^train(ing)?(set|loader|data|dataset|ds|sampler|s)?\d*$")


def _words(text: str) -> list[str]:
    return [w.lower() for part in re.split(r"[_.\W]+", text) for w in _WORDS.findall(part)]


def is_eval_name(text: str) -> bool:
    """``val_loader``, ``testset``, ``self.eval_sampler``, ``devDataset`` (not ``device``)."""
    return any(_EVAL_WORD.match(w) for w in _words(text))


def is_train_name(text: str) -> bool:
    return any(_TRAIN_WORD.match(w) for w in _words(text))
