"""What the converter knows about a script once the planners are done: where loaders, models
and epoch loops are and what to rewrite. The transformer and the linter read :class:`Facts`;
the planners (``ddpify.convert.planners``) fill it. A leaf module, so that the planners can
build these classes and ``ddpify.convert.facts`` can run the planners without an import cycle.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import libcst as cst

from ddpify.analysis import Analysis
from ddpify.analysis.models import Model
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import keyword_value

# "kept": a loader that may train but is left unsharded, with a report item saying why (its
# role is unknown, or the model it trains is not wrapped)
# "decided": only the run can tell whether it trains (``ddpify.distributed_loader(...,
# only_when_training=True)``: each pass sharded when it trains)
Role = Literal["train", "eval", "kept", "decided"]

_LINE = re.compile(r" \(line \d+\)| at line \d+| \(lines? [\d, ]+\)")


def item(line: int, why: str, todo: str) -> ManualItem:
    """A report item whose text names no line (the analysis' evidence does: "its loop at line
    16 ..."): ``--annotate`` writes it above its statement, and converting the output again
    must find the same comment there, whatever lines the conversion added."""
    return ManualItem(line, _LINE.sub("", why), _LINE.sub("", todo))


@dataclass
class LoaderFact:
    call: cst.Call
    key: str | None
    role: Role
    reason: str
    line: int
    # Set when the batch-size expression is also used as "the size of a batch" elsewhere:
    # splitting the batch would break that code, so this loader keeps the per-process batch.
    batch_used_at: int | None = None
    batch_expression: str | None = None
    # a loader of a dict comprehension sharded for some keys only: the test that selects them
    # (`x == "train"`), the DataLoader kept for the others
    sharded_when: str | None = None
    # ``sampler=`` holds a sampler where the loader is built (not ``None``, not a variable whose
    # last value before the call is None): the report says it is kept
    sampler_given: bool = False


@dataclass
class HeldModel:
    """A trained model left unwrapped (see ``planners.wraps``): its key, the analysis' model
    and the report items, which ``loaders.hold_back`` completes with the loaders it keeps."""

    key: str
    model: Model
    items: list[ManualItem]


@dataclass
class HelperLoader:
    """A training loader this file does not build: returned by a function of another module,
    or handed in (a parameter of the function that trains, an attribute set from one). It
    cannot be rewritten where it is built, so it is rebuilt (``ddpify.shard``) after
    ``statement`` (before it when ``before``: the first statement of the function whose
    parameter it is). ``origin`` says where it comes from, for the report."""

    statement: cst.BaseStatement
    key: str
    origin: str  # "built in another file (get_loaders())", "a parameter of Trainer.fit()"
    line: int
    call: cst.Call | None = None  # the helper's call
    slot: int | None = None  # the element of its result (a tuple), None: the whole result
    before: bool = False
    # ("self.args.batch_size", line): a batch size sizing a tensor on the training path of
    # this file (``torch.arange(self.args.batch_size)``): the loader keeps the per-process batch
    batch_used_at: tuple[str, int] | None = None
    # nothing here shows whether it trains: sharded for the passes that train (``shard(...,
    # only_when_training=True)``), unless ``loaders._settle_decided`` finds that unsafe
    decided: bool = False

    def rebuild_note(self, statement: str, *, per_process_batch: bool) -> str:
        """What the report says about ``statement`` (``x = ddpify.shard(x)``) rebuilding it."""
        if self.decided:
            note = (
                f"{self.key} is {self.origin}, and this file does not show whether it trains: {statement} shards each "
                "DataLoader in it for the passes that train, decided at run time (gradients on, a wrapped model in train "
                "mode; the whole dataset otherwise)"
            )
        else:
            note = (
                f"{self.key} is {self.origin} and trained on here: {statement} rebuilds it with a DistributedSampler at run "
                "time if it is a plain DataLoader; another batch iterator has each batch cut across the ranks; an object "
                "that keeps DataLoaders (and iterators over them) has them sharded in place"
            )
        given = keyword_value(self.call, "batch_size") if self.call is not None else None
        if isinstance(given, cst.Integer) and int(given.value) == 1 and not per_process_batch:
            note += "; its batch_size=1 does not split across the processes: each keeps its own batch (effective batch x world_size)"
        if self.batch_used_at is None or per_process_batch:
            return note
        used, line = self.batch_used_at
        return (
            f"{note}; per-process batch kept, because {used} sizes a tensor at line {line} (effective batch x world_size: "
            "scale the learning rate, or use the real batch length there and convert again)"
        )


class LoaderVariable(NamedTuple):
    """A variable that holds a loader (``train_loader``, ``self.val_loader``), where it is
    bound (owning function, None at module level; owning class) and the line that binds it."""

    key: str
    role: Role
    function: cst.FunctionDef | None
    klass: cst.ClassDef | None
    line: int


class Insertion(NamedTuple):
    """A statement a planner adds after ``anchor`` (``ddpify.prepare_trained(self.nets,
    self.optims)``, ``ddpify.barrier()``), or before it; ``key`` names what it is for (one per
    key), ``what`` is the report line."""

    key: str
    anchor: cst.CSTNode
    statement: cst.BaseStatement
    what: str
    before: bool = False


class NodeRewrite(NamedTuple):
    """A planner's rewrite of one node: ``rewrite(updated_node)`` and what the report says."""

    rewrite: Callable[[cst.CSTNode], cst.CSTNode]
    what: str


@dataclass
class Facts:
    loaders: dict[cst.Call, LoaderFact] = field(default_factory=dict)
    helper_loaders: list[HelperLoader] = field(default_factory=list)
    # `save_checkpoint(...)` of the project's own modules: statement -> helper, run on rank 0
    rank_zero_helpers: dict[cst.SimpleStatementLine, str] = field(default_factory=dict)
    # trained models handed to such a helper (or to code that needs no DDP): passed as
    # ddpify.unwrap(model); the value says to what, for the report
    unwrapped_args: dict[cst.Arg, str] = field(default_factory=dict)
    # model wrap: model key -> (statement to insert before / after, "before" | "after")
    model_wraps: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)
    model_keys: set[str] = field(default_factory=set)
    # models wrapped where they go into the container that trains them (``Facts.node_rewrites``)
    container_wraps: list[str] = field(default_factory=list)
    # statements added after others (``planners.container_wraps``, ``directories``)
    inserted: list[Insertion] = field(default_factory=list)
    # keyword arguments for a wrap: (anchor, model key) -> "find_unused_parameters=True"
    wrap_options: dict[tuple[cst.CSTNode, str], str] = field(default_factory=dict)
    # `model.decode` of a model left unwrapped: stays as written (no ddpify.unwrap)
    kept_attributes: set[cst.CSTNode] = field(default_factory=set)
    # random index draws that select training batches: call -> the generator to give them
    rank_generators: dict[cst.Call, cst.BaseExpression] = field(default_factory=dict)
    # every random index draw of training batches that each rank now makes from its own stream
    rank_draws: set[cst.Call] = field(default_factory=set)
    # scopes that bind each plain-name model (`model` in main()): the same name bound in
    # another function (`model = parser.add_argument_group(...)`) is not the model
    model_scopes: dict[str, set[cst.CSTNode]] = field(default_factory=dict)
    set_epoch: dict[cst.For, list[str]] = field(default_factory=dict)
    # a loader built inside its epoch loop: statement that builds it -> [(loader, epoch variable)]
    set_epoch_after: dict[cst.CSTNode, list[tuple[str, str]]] = field(default_factory=dict)
    # gradient accumulation loops: loop -> (model key, the test that decides the step)
    accumulation: dict[cst.For, tuple[str, str]] = field(default_factory=dict)
    # arguments that hand a training loader to evaluation code (a loop without backward)
    unsharded_args: set[cst.Arg] = field(default_factory=set)
    # model.cpu() / model.to(device) inside the training loop, after the wrap: dropped
    dropped_moves: set[cst.Call] = field(default_factory=set)
    # statements that download data (download=True, from_pretrained): rank 0 goes first
    downloads: set[cst.SimpleStatementLine] = field(default_factory=set)
    # writes one process makes (save_image, savefig, csv/log files...): statement -> what it writes
    main_process_only: dict[cst.CSTNode, str] = field(default_factory=dict)
    # left on every rank, reported: writes into a handle every rank opened and reads back, and
    # logging clients (SummaryWriter(...)) whose values every rank computes with
    # `CSVLogger(...)`: a file-writing class of the project's modules, built on rank 0 only
    # (`ddpify.rank_zero(CSVLogger)(...)`; ``logs.plan_file_writer_classes``)
    rank_zero_clients: set[cst.Call] = field(default_factory=set)
    kept_writes: set[cst.Call] = field(default_factory=set)
    # open(path, "w") whose block also computes: ddpify.rank_zero(open)(...)
    rank_zero_opens: set[cst.Call] = field(default_factory=set)
    # files rank 0 now writes alone: (the statement or block that writes, what writes, the path);
    # their reads on every rank wait for it (``reloads.plan``)
    rank_zero_files: list[tuple[cst.CSTNode, str, cst.BaseExpression]] = field(default_factory=list)
    # models saved whole (torch.save(model, f), {"net": net}): the Arg / DictElement to unwrap
    unwrapped_values: set[cst.CSTNode] = field(default_factory=set)
    # rewrites a planner decides whole (per-process paths and values, logging, web downloads):
    # original node -> (rewrite of its updated node, the report line); applied after the others
    node_rewrites: dict[cst.CSTNode, NodeRewrite] = field(default_factory=dict)
    main_guard: cst.If | None = None
    setup_after: cst.CSTNode | None = None
    same_string_hashes: bool = False  # the project's code orders sets: ddpify.setup(same_string_hashes=True)
    has_training_code: bool = False
    # calls that hand a model built here to another project file's trainer (planners.drivers):
    # the file is converted for its output although it trains nothing itself
    # the training is done by project modules converted alongside (``ddpify.companions``)
    trains_in_modules: bool = False
    # this file is a project module converted alongside a script that wraps the models it hands
    # in (``ddpify.companions``): the models it trains are DDP models already
    models_from_caller: bool = False
    # and the loaders it hands in are sharded there for the passes that train (only_when_training):
    # the data this module trains on without building it is sharded, and reshuffles each pass
    data_from_caller: bool = False
    # the resolved files of the project modules converted alongside this one (``ddpify.companions``):
    # their objects' methods save on rank 0 themselves once converted, so calls into them stay as they are
    companion_files: frozenset[str] = frozenset()
    # hand-overs of the DDP models built here to a project trainer that trains them on data
    # this file neither builds nor hands to it: that module is converted alongside
    wrapped_for_modules: set[cst.Call] = field(default_factory=set)
    cut_batches: bool = (
        False  # training batches cut per rank at run time (batch_part, a sharded iterator class): they start the per-rank streams
    )
    trained_elsewhere: set[cst.Call] = field(default_factory=set)
    already_converted: bool = False
    changes: list[Change] = field(default_factory=list)
    manual: list[ManualItem] = field(default_factory=list)

    def wraps_models(self) -> bool:
        """Whether the conversion wraps some model (after a statement, or inside a container)."""
        return bool(self.model_wraps or self.container_wraps)

    def shards_training(self) -> bool:
        """Whether each rank trains on its own data: a sharded training loader (or a project
        helper's), random index draws each rank makes from its own stream, batches cut at run
        time, or a trainer module converted alongside that shards its own. Where one starts, the
        runtime switches the seeded RNGs to seed + rank (``ddpify.switch_to_rank_seeds``)."""
        return bool(
            any(f.role in ("train", "decided") for f in self.loaders.values())
            or self.helper_loaders
            or self.rank_draws
            or self.trained_elsewhere
            or self.cut_batches
        )

    # ---- passed from one planner to later ones; the transformer reads neither
    # every variable that holds a loader, in the order found (a key may repeat)
    loader_variables: list[LoaderVariable] = field(default_factory=list)
    # (optimizer, or a call of a helper that builds one, key of a model it trains)
    trained: list[tuple[cst.Call, str]] = field(default_factory=list)
    # trained models left unwrapped: their loaders stay unsharded (loaders.hold_back)
    held_models: list[HeldModel] = field(default_factory=list)
    # the shared analysis of the same module, built on first use (the recording's)
    analysis_of: Callable[[], Analysis] | None = field(default=None, repr=False)

    @property
    def analysis(self) -> Analysis:
        """``ddpify.analysis`` of the file these facts are about: lint rules ask it the same
        questions the planners did, and get the same answers."""
        assert self.analysis_of is not None, "facts made without collect_facts have no analysis"
        return self.analysis_of()
