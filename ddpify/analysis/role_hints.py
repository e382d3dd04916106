"""What a name says about the data it holds (``val_loader``, ``testset``, ``devDataset``:
evaluation; ``train_loader``: training), and what a loader's names or ``shuffle=`` suggest about
its role. Only ever a tie-breaker or an explanation: the converter's roles come from where the
batches go (``ddpify.analysis.dataflow``), never from a name."""

from __future__ import annotations

import re

import libcst as cst

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


def name_hint(names: tuple[str, ...], key: object, node: cst.CSTNode) -> tuple[str | None, str | None]:
    """What names (``val_loader``, the key ``"test"``) or ``shuffle=`` suggest: "train" /
    "eval" and why. Reported for a tie, never used for a role."""
    for name in ([str(key)] if key not in (None, "*") else []) + list(names):
        last = name if "[" in name else name.rsplit(".", 1)[-1]
        if is_eval_name(last):
            return "eval", f"named {name}"
        if is_train_name(last):
            return "train", f"named {name}"
    if isinstance(node, cst.Call):
        shuffle = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "shuffle"), None)
        if isinstance(shuffle, cst.Name) and shuffle.value in ("True", "False"):
            return ("train" if shuffle.value == "True" else "eval"), f"shuffle={shuffle.value}"
    return None, None
