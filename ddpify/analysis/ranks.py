"""The model of "which processes": a run is four classes of process, and a condition is the
classes where it *may* and where it *must* be true (``Ranks``), so ``and`` / ``or`` / ``not``
are set operations and an early exit leaves the classes where its test must be false.

- ``SOLO``: the script run as one process, without a launcher (rank 0 of a world of 1);
- ``MAIN``: global rank 0 of a distributed run;
- ``LEAD``: local rank 0 of every other node;
- ``REST``: every other rank.

Also here: what the script's rank numbers are worth in each class (``Number``, ``values_in``,
``compare``), and the spellings ``ddpify.analysis.rank_tests`` recognises (APIs, environment
variables, names)."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

import libcst as cst

SOLO, MAIN, LEAD, REST = 1, 2, 4, 8
DISTRIBUTED = MAIN | LEAD | REST
EVERYWHERE = SOLO | DISTRIBUTED
CLASSES = (SOLO, MAIN, LEAD, REST)


class RankSelection(enum.Enum):
    """Which ranks of a distributed run a test lets through (or run a statement)."""

    ALL = "every rank alike"  # also: not a rank test
    MAIN = "the main process only"
    LOCAL_MAIN = "once per node"
    NOT_MAIN = "every rank but the main one"
    NOT_LOCAL_MAIN = "every rank but local rank 0"
    OTHER = "some ranks"
    NONE = "no rank of a distributed run"  # single-process code
    NOT_A_RANK_TEST = "every rank alike"  # alias of ALL

    @property
    def rank_dependent(self) -> bool:
        return self not in (RankSelection.ALL, RankSelection.NONE)


class Branch(enum.Enum):
    """Which kind of run executes a statement: ``if args.distributed:`` vs its ``else``."""

    BOTH = "both"
    DISTRIBUTED = "distributed"
    SINGLE_PROCESS = "single-process"


@dataclass(frozen=True)
class Ranks:
    """Classes of process where a condition may / must hold (``must`` within ``may``)."""

    may: int
    must: int

    def __and__(self, other: Ranks) -> Ranks:
        return Ranks(self.may & other.may, self.must & other.must)

    def __or__(self, other: Ranks) -> Ranks:
        return Ranks(self.may | other.may, self.must | other.must)

    def __invert__(self) -> Ranks:
        return Ranks(EVERYWHERE & ~self.must, EVERYWHERE & ~self.may)

    @property
    def selection(self) -> RankSelection:
        may, must = self.may & DISTRIBUTED, self.must & DISTRIBUTED
        if may == 0:
            return RankSelection.NONE
        if may == DISTRIBUTED and must in (0, DISTRIBUTED):
            return RankSelection.ALL
        if may == MAIN:
            return RankSelection.MAIN
        if may == MAIN | LEAD:
            return RankSelection.LOCAL_MAIN
        if may == must == LEAD | REST:
            return RankSelection.NOT_MAIN
        if may == must == REST:
            return RankSelection.NOT_LOCAL_MAIN
        return RankSelection.OTHER

    @property
    def depends_on_process(self) -> bool:
        """Not the same in every class: a rank test or a distributed/single-process test."""
        return self.may not in (0, EVERYWHERE) or self.must not in (0, EVERYWHERE)

    @property
    def branch(self) -> Branch:
        if not self.may & SOLO:
            return Branch.DISTRIBUTED
        if not self.may & DISTRIBUTED:
            return Branch.SINGLE_PROCESS
        return Branch.BOTH


EVERY = Ranks(EVERYWHERE, EVERYWHERE)
NOWHERE = Ranks(0, 0)
UNKNOWN = Ranks(EVERYWHERE, 0)


def weighed(values: list[tuple[Ranks, Ranks]]) -> Ranks:
    """Values that each hold where their statement (or call) runs -> where the variable (or
    parameter) holds: ``may`` wherever one may, ``must`` only where every one that may run
    there must."""
    may = must = 0
    for where, value in values:
        may |= where.may & value.may
    for klass in CLASSES:
        runs = [value for where, value in values if where.may & klass]
        if runs and all(v.must & klass for v in runs):
            must |= klass
    return Ranks(may, must & may)


class Term(enum.Enum):
    """What a number or flag of the script is."""

    GLOBAL_RANK = "global rank"
    LOCAL_RANK = "local rank"
    NODE_RANK = "node rank"
    WORLD_SIZE = "world size"


RANK_TERMS = frozenset({Term.GLOBAL_RANK, Term.LOCAL_RANK, Term.NODE_RANK})
FLAGS = {
    "main": Ranks(SOLO | MAIN, SOLO | MAIN),
    "local_main": Ranks(SOLO | MAIN | LEAD, SOLO | MAIN | LEAD),
    "distributed": Ranks(DISTRIBUTED, DISTRIBUTED),
    # the build has torch.distributed: true in every distributed run, unknown in a single process
    "available": Ranks(SOLO | DISTRIBUTED, DISTRIBUTED),
}

# ---------------------------------------------------------------- spellings
API_NUMBERS = {
    "torch.distributed.get_rank": Term.GLOBAL_RANK,
    "torch.distributed.distributed_c10d.get_rank": Term.GLOBAL_RANK,
    "torch.distributed.get_node_local_rank": Term.LOCAL_RANK,
    "torch.distributed.get_world_size": Term.WORLD_SIZE,
    "torch.distributed.distributed_c10d.get_world_size": Term.WORLD_SIZE,
    "ddpify.runtime.rank": Term.GLOBAL_RANK,
    "ddpify.runtime.local_rank": Term.LOCAL_RANK,
    "ddpify.runtime.world_size": Term.WORLD_SIZE,
    "horovod.torch.rank": Term.GLOBAL_RANK,
    "horovod.torch.local_rank": Term.LOCAL_RANK,
    "horovod.torch.size": Term.WORLD_SIZE,
    "torch_xla.core.xla_model.get_ordinal": Term.GLOBAL_RANK,
    "torch_xla.core.xla_model.get_local_ordinal": Term.LOCAL_RANK,
}
API_FLAGS = {
    "torch.distributed.is_initialized": "distributed",
    "torch.distributed.distributed_c10d.is_initialized": "distributed",
    "torch.distributed.is_available": "available",
    "ddpify.runtime.is_main_process": "main",
    "ddpify.runtime.is_distributed": "distributed",
}
ENVIRONMENT = {
    **dict.fromkeys(("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"), Term.GLOBAL_RANK),
    **dict.fromkeys(("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"), Term.LOCAL_RANK),
    **dict.fromkeys(("NODE_RANK", "GROUP_RANK", "SLURM_NODEID"), Term.NODE_RANK),
    **dict.fromkeys(("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"), Term.WORLD_SIZE),
}
# Names (the last component of a reference or callee), the last resort.
NAMED_NUMBERS = (
    # also the one-letter abbreviations (Versatile-Diffusion's ``GRANK, LRANK, NRANK = sync.get_rank("all")``)
    (re.compile(r"^_*(get_)?(\w+_)?(node|machine|group)_?(rank|id)$|^_*n_?rank$", re.I), Term.NODE_RANK),
    (
        re.compile(r"^_*(get_)?(\w+_)?local_?rank(_id)?$|^_*(get_)?local_process_index$|^_*(get_)?local_ordinal$|^_*l_?rank$", re.I),
        Term.LOCAL_RANK,
    ),
    (re.compile(r"^_*(get_)?(\w+_)?world_?size$|^num_processes$|^n_?procs$|^num_replicas$", re.I), Term.WORLD_SIZE),
    # `rank`, `global_rank`, `ddp_rank`; not `lora_rank` or `low_rank` (a matrix rank)
    (
        re.compile(
            r"^_*(get_)?((global|ddp|dist|distributed|world|process|proc|my|cur|current|this|mpi|hvd|worker|gpu|g)_?)?rank(_id)?$|"
            r"^_*(get_)?process_index$|^_*(get_)?ordinal$",
            re.I,
        ),
        Term.GLOBAL_RANK,
    ),
)
# The GPU index: the local rank in scripts that start one process per GPU themselves.
DEVICE_INDEX = re.compile(r"^_*(gpu|gpu_?id|gpu_?idx|local_gpu)$", re.I)
NAMED_FLAGS = (
    (re.compile(r"^_*(is_)?local_(main|master|zero|rank_?zero|rank_?0)(_process|_proc)?$", re.I), "local_main"),
    (
        re.compile(
            r"^_*(is_(main|master|chief|primary)(_process|_proc|_rank|_worker|_node)?|(main|master)_(process|proc|rank|worker)|"
            r"is_global_zero|global_zero|is_rank_?(0|zero)|rank_?(0|zero)|on_(main|master)(_process)?|master)$",
            re.I,
        ),
        "main",
    ),
    (
        re.compile(
            r"^_*(is_|use_|using_)?(distributed|ddp)(_mode|_training|_train|_run|_enabled)?$|^multiprocessing_distributed$|"
            r"^_*(is_|use_|using_)?dist_(train|training|mode|run)$|"
            r"^is_dist\w*_initialized$|^is_dist$",
            re.I,
        ),
        "distributed",
    ),
)
# Decorators that run the function they wrap on some ranks only (``ddpify.analysis.decorators``):
# the libraries' by qualified name, then by name for those the project reading cannot see.
API_DECORATORS = {
    **dict.fromkeys(
        (
            f"{package}.{module}rank_zero_only"
            for package in (
                "pytorch_lightning.utilities",
                "lightning.pytorch.utilities",
                "lightning_fabric.utilities",
                "lightning.fabric.utilities",
            )
            for module in ("", "rank_zero.")
        ),
        "main",
    ),
    "lightning_utilities.core.rank_zero.rank_zero_only": "main",
    "mmcv.runner.master_only": "main",
    "mmcv.runner.dist_utils.master_only": "main",
    "mmengine.dist.master_only": "main",
    "mmengine.dist.utils.master_only": "main",
}
NAMED_DECORATORS = (
    (re.compile(r"^_*(on_)?local_(main|master|rank_?(0|zero))(_process)?(_only)?$", re.I), "local_main"),
    (
        re.compile(
            r"^_*((rank_?(0|zero)|global_zero|(main|master|chief)(_process|_proc|_rank)?)_only|only_(on_)?(main|master|rank_?(0|zero))(_process)?|"
            r"on_(main|master)_process|on_rank_?(0|zero))$",
            re.I,
        ),
        "main",
    ),
)
GLOBAL_NAME = NAMED_NUMBERS[3][0]
CASTS = frozenset({"builtins.int", "builtins.float", "builtins.str", "builtins.bool"})
PROCESS_MODULES = ("torch.distributed", "torch.multiprocessing", "torch.nn.parallel")

Interval = tuple[float, float]
POSITIVE: Interval = (1, math.inf)


@dataclass(frozen=True)
class Number:
    """A rank-like number and its value in the single process (None: the usual default)."""

    term: Term
    solo: int | None = None


def values_in(number: Number, mentions_minus_one: bool) -> tuple[Interval, Interval, Interval, Interval]:
    """The number's possible values in each class (SOLO, MAIN, LEAD, REST)."""
    default = number.solo if number.solo is not None else -1 if mentions_minus_one else 0
    solo: Interval = (default, default)
    if number.term is Term.GLOBAL_RANK:
        return solo, (0, 0), POSITIVE, POSITIVE
    if number.term is Term.LOCAL_RANK:
        return solo, (0, 0), (0, 0), POSITIVE
    if number.term is Term.NODE_RANK:
        return (0, 0), (0, 0), POSITIVE, (0, math.inf)
    return (1, 1), (2, math.inf), (2, math.inf), (2, math.inf)


def compare(value: Interval, operator: cst.BaseCompOp, constants: list[int]) -> bool | None:
    """``value <operator> constant(s)``: True, False, or None when it depends."""
    low, high = value
    if isinstance(operator, (cst.In, cst.NotIn)):
        if low == high and low in constants:
            answer: bool | None = True
        elif not any(low <= c <= high for c in constants):
            answer = False
        else:
            answer = None
        return answer if isinstance(operator, cst.In) else None if answer is None else not answer
    (k,) = constants
    if isinstance(operator, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)):
        equal = True if low == high == k else False if not low <= k <= high else None
        return equal if isinstance(operator, (cst.Equal, cst.Is)) else None if equal is None else not equal
    tests = {
        cst.LessThan: (high < k, low >= k),
        cst.LessThanEqual: (high <= k, low > k),
        cst.GreaterThan: (low > k, high <= k),
        cst.GreaterThanEqual: (low >= k, high < k),
    }
    surely, never = tests.get(type(operator), (False, False))
    return True if surely else False if never else None


def flipped(operator: cst.BaseCompOp) -> cst.BaseCompOp | None:
    """The operator with its sides swapped (``0 == rank`` -> ``rank == 0``); None for ``in``."""
    if isinstance(operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
        return operator
    swapped: dict[type, cst.BaseCompOp] = {
        cst.LessThan: cst.GreaterThan(),
        cst.GreaterThan: cst.LessThan(),
        cst.LessThanEqual: cst.GreaterThanEqual(),
        cst.GreaterThanEqual: cst.LessThanEqual(),
    }
    return swapped.get(type(operator))


def constant(node: cst.BaseExpression) -> int | None:
    """``0``, ``-1``, ``"0"`` as an int."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.evaluated_value)
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        if isinstance(text, str) and re.fullmatch(r"-?\d+", text.strip()):
            return int(text)
    return None


def constants_of(node: cst.BaseExpression) -> list[int] | None:
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        values = [constant(e.value) for e in node.elements]
        return None if any(v is None for v in values) else values  # type: ignore[return-value]
    value = constant(node)
    return None if value is None else [value]


def last_name(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def evaluate(number: Number, operator: cst.BaseCompOp, constants: list[int]) -> Ranks:
    """Where ``number <operator> constants`` holds, class by class of process."""
    may = must = 0
    for klass, value in zip(CLASSES, values_in(number, -1 in constants), strict=True):
        answer = compare(value, operator, constants)
        if answer is not False:
            may |= klass
        if answer is True:
            must |= klass
    return Ranks(may, must)
