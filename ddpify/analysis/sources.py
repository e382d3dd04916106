"""The vocabulary of data flow (``ddpify.analysis.dataflow``): the kinds of batch sources,
the roles decided for them, what one loop does with its batches, and the records that carry
the evidence. Plain frozen records, so the converter and the linter can hold them."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

# Random index sampling: a batch source where the result selects data (``data[ix]``).
RANDOM = frozenset(
    {
        "torch.randint",
        "torch.randperm",
        "numpy.random.randint",
        "numpy.random.choice",
        "numpy.random.permutation",
        "numpy.random.random_integers",  # deprecated, inclusive bounds; older scripts still draw with it
        "random.sample",
        "random.choices",
        "random.randint",
        "random.randrange",
    }
)


class Kind(enum.Enum):
    DATALOADER = "dataloader"
    CUSTOM_ITERATOR = "custom_iterator"
    RANDOM_INDEX = "random_index"
    UNKNOWN = "unknown"


class Role(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"
    UNKNOWN = "unknown"


class Use(enum.Enum):
    """What one loop does with the batches it takes."""

    TRAINING = "training"
    EVALUATION = "evaluation"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Consumer:
    """A place that takes batches: a loop over them (``For``/``While``), or the call that hands
    out one batch (``next(it)``, ``get_batch()``) outside a loop. ``functions``: the file's
    functions the batches are handed to from there; ``key``: the run-time container key it
    was reached through (``phase`` of ``loaders[phase]``), which leaves its use undecided."""

    node: cst.CSTNode
    use: Use
    evidence: str
    line: int
    functions: tuple[cst.FunctionDef, ...] = ()
    key: str | None = None


@dataclass(frozen=True)
class BatchSource:
    """``node``: the ``DataLoader(...)`` call, the iterator class or generator/batch function,
    the random index call, or (kind UNKNOWN) what a training loop iterates. ``key``: its key
    in a dict comprehension (kind UNKNOWN: the element of what ``node`` returns, ``1`` for
    ``val_loader`` of ``train_loader, val_loader = get_loaders()``). ``names``: the spellings that hold it (``train_loader``,
    ``self.loader``, ``loaders["train"]``). ``hint``: what its names or ``shuffle=`` suggest,
    reported for a tie, never used for ``role``."""

    node: cst.CSTNode
    kind: Kind
    role: Role
    evidence: str
    line: int
    consumers: tuple[Consumer, ...] = ()
    key: str | int | None = None
    names: tuple[str, ...] = ()
    hint: Role | None = None
    hint_reason: str | None = None
