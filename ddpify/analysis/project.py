"""Facts from the checked file's own project: what calling one of its imported helpers does.

A DDP script rarely says everything itself: ``utils.init_distributed_mode(args)`` silences
``print`` on the other ranks, ``misc.is_main_process()`` is a rank test, ``launch(worker, ...)``
starts worker processes. When the file imports a module of its own project
(``ddpify.analysis.project_files`` finds it), that module is parsed once per version of the
file and each of its module-level functions summarised as a ``Helper`` by ``summarise``
(``ddpify.analysis.summarise``: the same analyses the checked file gets, reading its own
imports one level less deep; handed in, so this module stays below the analyses that use it).
The converter and the linter both reach this through ``Source.project``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from ddpify.analysis import project_files
from ddpify.analysis.ranks import Number, Ranks
from ddpify.tree.cstutil import code, is_simple_reference


@dataclass(frozen=True)
class Seeding:
    """A helper seeds ``families`` with its parameter ``name`` (position ``index``) as it is,
    or with its ``attribute`` (``".seed"``: ``set_seed(args)`` seeds with ``args.seed``)."""

    families: frozenset[str]
    index: int
    name: str
    attribute: str = ""


# A helper's ``sets_flags``: (index of the parameter, attribute set on it, where it ends up true)
SetFlags = tuple[tuple[int, str, Ranks], ...]


@dataclass(frozen=True)
class Helper:
    """What a call of one project function does, as far as DDP cares: ``flag``, where its
    result is true (a rank test such as ``is_main_process()``); ``number``, the rank number it
    returns; ``silences_print``, it replaces ``builtins.print`` for the non-main ranks;
    ``spawns``, the index of its parameter that it starts as worker processes
    (``mp.spawn(fn, ...)`` on its argument ``fn``); ``loads_state``, it calls
    ``load_state_dict`` on what it is handed (``restart_from_checkpoint(path, state_dict=model)``);
    ``loads_unprefixed``, it loads a state dict and strips or tolerates the wrapper's ``module.``
    prefix on the way; ``seeds``, it seeds the global RNGs with one of its parameters as it is
    (``fix_random_seeds(seed)``: the same seed on every rank when the caller's is); ``trains``,
    it calls ``backward`` or an optimizer step, itself or through its class's own methods (a
    training step: ``trainer.do_pass(batch)``); ``console_logger``, it returns a logger that
    prints on every rank (-1), or such a logger as that element of the tuple it returns
    (``ddpify.analysis.loggers``); ``returns_sampler``, it returns a ``DistributedSampler`` on
    some path (``data_sampler(dataset, shuffle, distributed)``); ``collective``, the collective
    it runs on every call (``reduce_mean`` -> ``dist.all_reduce``); ``sharded_loaders``, the
    elements of its result that are loaders with a ``DistributedSampler`` on some path (-1: the
    whole result; ``ddpify.analysis.samplers``), and ``padded_loaders`` those whose sampler pads
    them with repeated samples (no ``drop_last=True``); ``draws``, the global RNGs it draws from or
    consumes (dropout, random augmentation, loader workers: ``ddpify.analysis.seeding``), also
    through the module's own functions it calls; a class of the module is summarised as
    ``Class.__init__`` with what all its methods draw (building it is what lets them run);
    ``writes_files``, a class whose methods write files and do nothing else the ranks share
    (``CSVLogger``: ``ddpify.analysis.loggers.file_writer_classes``); ``declares_local_rank``, a
    function or class that declares a ``--local_rank`` option torchrun leaves at its default
    (``ddpify.analysis.launch_args``); ``makes_paths``, a function that creates
    directories, or writes a file it first tests for, in its own body
    (``ddpify.analysis.loggers.path_makers``); ``distributed``, it
    joins or uses the process group, itself or through what it calls, and for a class one of its
    methods does; ``joins_group``, it initialises the process group, itself or through what it
    calls (``ddpify.analysis.distributed_code``); ``unused_submodules``, a module class (as
    ``Class.__init__``) or a function returning one whose ``forward`` never uses these
    submodules (an EMA copy: ``ddpify.analysis.modules``); ``dropped_outputs``, for such a class,
    what its ``forward`` computes with a submodule and drops (``ddpify.analysis.dropped_outputs``),
    and ``submodules``, every submodule and parameter it registers, when all are known; ``strips_prefix``, its code names the
    wrapper's ``module.`` prefix (``fix_legacy_dict(d)`` that drops it from what it returns); ``decorates``, a decorator
    that runs the function it wraps on these ranks only (``@master_only``:
    ``ddpify.analysis.decorators``); ``sets_flags``, the rank flags it sets on the objects it
    is handed (``opt.log`` after ``init_dist(opt)``: ``ddpify.analysis.flag_setters``); ``writes``, it
    writes a file, an image, an event or to the terminal other than through print and logging,
    itself or through what it calls, and for a class one of its methods does
    (``ddpify.analysis.output.writing_functions``). ``flag_defaults``, the mode parameters its ``flag`` was read at
    their default (``is_master(args, local=False)``: a call passing ``local`` has no known
    flag; ``ddpify.analysis.flag_defaults``). ``optimizer_class``, a class (as ``Class.__init__``)
    deriving from ``torch.optim.Optimizer`` (SAM, LARS). ``module_methods``, for an ``nn.Module``
    class (as ``Class.__init__``), its own methods (``log_probs``: ``ddpify.analysis.own_training``).
    ``replaces_local_rank``, it sets a ``.local_rank`` from LOCAL_RANK (``ddpify.analysis.launch_args``).
    ``changes_arguments``, it may change what it is handed or module state (``model.eval()``,
    ``history.append(x)``: ``ddpify.analysis.output.argument_changers``). ``writes_cache``, it writes
    a file it first tests for by the same path (``ddpify.analysis.loggers.cache_writers``).
    ``sets_device``, it sets the current GPU, itself or through what it calls
    (``ddpify.analysis.distributed_code.device_setting_functions``). ``loads_unmapped``, it
    ``torch.load``s a file without a ``map_location`` (``ddpify.analysis.loads``). ``attribute_flags``,
    for a class (as ``Class.__init__``), the rank flags its methods set on ``self``, with those of its
    project base classes (``ddpify.analysis.flag_setters.class_flags``). ``starts_run``, it starts an
    experiment-tracker run (``wandb.init``) wherever it runs, or for a class its methods do
    (``ddpify.analysis.loggers.run_starters``). ``wraps_ddp``, it wraps a model in DistributedDataParallel (Pointcept's ``create_ddp_model``).
    ``reads_names``, the positions of the arguments whose members it reads by name and never calls
    (an EMA helper's ``register(model)``: ``ddpify.analysis.modules.name_readers``).
    ``library_object``, a module-level variable holding an object of a library's class (yacs's
    ``cfg = CN()``): its methods are the library's, not the project's. ``redirects_stdout``, a
    context-manager class (as ``Class.__init__``) whose ``__enter__`` sends standard output
    elsewhere (``with HiddenPrints(rank):``: ``ddpify.analysis.output``). ``writes_when_built``, a
    class (as ``Class.__init__``) whose own ``__init__`` writes (``CSVLogger`` opening its file),
    not only some of its methods.
    ``returns_writer``, a function that returns a TensorBoard event writer it makes
    (``ddpify.analysis.loggers.writer_factories``). ``orders_sets``, it turns a set into an order,
    itself or through the module's functions it calls, or for a class one of its methods does
    (``ddpify.analysis.set_orders``). ``returns_metrics``, the elements of its result (-1: the whole)
    that carry a running loss or accuracy its own training loop accumulates, unreduced
    (``ddpify.analysis.running_metrics``). ``keys_batches``, the positions of the parameters whose
    batches one of its loops stores under a key read from the batch (predictions by image id:
    ``ddpify.analysis.keyed_results``). ``console_level``, the level (WARNING or lower) at which
    it gives the root logger a console on every rank (``ddpify.analysis.console_logging``);
    ``logging_logger``, a module-level ``logging.getLogger(...)`` logger (BERT-NER's
    ``from tools.common import logger``), which prints wherever the root logger does;
    ``quiets_logging``, it quiets loggers on some ranks (``ddpify.analysis.console_logging``).
    ``opt_in_collective``, the option and the collective it runs only when a call passes that
    option true (``log(msg, sync=True)``: ``ddpify.analysis.collectives``).
    ``seeds_torch``, it seeds torch's global RNG with any value (``ddpify.analysis.seeding.module_torch_seeders``).
    Methods are looked up as ``Class.method``."""

    flag: Ranks | None = None
    number: Number | None = None
    silences_print: bool = False
    spawns: int | None = None
    loads_unprefixed: bool = False
    loads_state: bool = False
    seeds: Seeding | None = None
    trains: bool = False
    console_logger: int | None = None
    returns_sampler: bool = False
    collective: str | None = None
    sharded_loaders: tuple[int, ...] = ()
    draws: frozenset[str] = frozenset()
    writes_files: bool = False
    declares_local_rank: bool = False
    makes_paths: bool = False
    distributed: bool = False
    joins_group: bool = False
    unused_submodules: tuple[str, ...] = ()
    dropped_outputs: tuple[str, ...] = ()
    returns_writer: bool = False
    orders_sets: bool = False
    submodules: tuple[str, ...] | None = None
    strips_prefix: bool = False
    decorates: Ranks | None = None
    sets_flags: SetFlags = ()
    writes: bool = False
    flag_defaults: frozenset[tuple[int, str]] = frozenset()
    optimizer_class: bool = False
    module_methods: frozenset[str] = frozenset()
    replaces_local_rank: bool = False
    changes_arguments: bool = False
    reads_names: tuple[int, ...] = ()
    library_object: bool = False
    returns_metrics: tuple[int, ...] = ()
    keys_batches: tuple[int, ...] = ()
    seeds_torch: bool = False
    writes_cache: bool = False
    wraps_ddp: bool = False
    redirects_stdout: bool = False
    writes_when_built: bool = False
    padded_loaders: tuple[int, ...] = ()
    sets_device: bool = False
    loads_unmapped: bool = False
    attribute_flags: tuple[tuple[str, Ranks], ...] = ()
    starts_run: bool = False
    console_level: int | None = None
    logging_logger: bool = False
    quiets_logging: bool = False
    opt_in_collective: tuple[str, str] | None = None


# The key of a module's helpers that says what importing the module does (its module-level code):
# ``silences_print``, it replaces ``print`` for the other ranks at import time; ``seeds_torch``, it seeds torch.
ON_IMPORT = "<import>"

# Where the calls of ``callee`` in one project file pass its parameter (name, position) an
# object: ``(where the call runs, where the argument is not None)`` per call, or with ``True``
# where the argument is true (None: the call passes none, the default holds); None when one
# cannot be told (``ddpify.analysis.presence`` and ``parameter_flags`` ask it of the files that
# import this one).
Outside = Callable[[Path, str, str, int, bool], "list[tuple[Ranks, Ranks | None]] | None"]

# One project file read once: where its ``x.method(...)`` calls run, per method name, or (with
# ``True``) its calls of a function of that name (None: not readable); ``ddpify.analysis.context``
# asks it of the files that import this one, for a method or function this file never calls;
# with ``True`` the file is read with its imports (it subclasses a class of this file, whose flags
# it inherits: ``if self.verbose:``), else on its own.
Called = Callable[[Path, bool], "Callable[[str, bool], list[Ranks]] | None"]
# One project file read once: for each of its calls of ``callee`` (a module function, or with
# ``True`` a method) that hands the parameter (name, position) a loader with a distributed
# sampler, whether the calling function combines anything across processes (None: not readable);
# ``DDP014`` asks it of the files that import this one, for an evaluation function they call.
Handed = Callable[[Path, str, str, int, bool], "list[bool] | None"]
# At most this many importing files are read for one checked file, and none when more than
# ``_CALLERS_PER_METHOD`` of them name one method: the cost stays bounded on a module imported
# everywhere (its callers are then unknown, and the method runs where it is defined).
_CALLER_FILES = 32
_CALLERS_PER_METHOD = 16

# Summarises one parsed project module read ``depth`` imports deep into its helpers by name
# (``ddpify.analysis.summarise``: the whole analysis of that module).
Summarise = Callable[[cst.Module, str, int], dict[str, Helper]]


class Project:
    """The project helpers one file can call, looked up by the callee as the file writes it;
    ``text`` (the file's source) is asked for only when a lookup needs the imports."""

    def __init__(
        self,
        text: Callable[[], str],
        path: str | None,
        depth: int,
        summarise: Summarise,
        outside: Outside | None = None,
        called: Called | None = None,
        handed: Handed | None = None,
    ) -> None:
        self.depth = depth
        self._text = text
        self._path = path
        self._summarise = summarise
        self._outside = outside
        self._called = called
        self._handed = handed
        self._callers: dict[Path, Callable[[str, bool], list[Ranks]] | None] = {}

    def called_elsewhere(self, method: str, *, function: bool = False) -> Ranks | None:
        """Where the project's files that import this one (up to five imports up) call a method
        named ``method`` (a base class's ``_save_checkpoint`` called by a subclass in another
        file under ``if local_rank == 0:``), or with ``function`` a module function of that name
        (TransReID's ``do_inference``, which only test.py, a one-process script, calls); None when
        none of them does."""
        if self._called is None or self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return None
        needle = f"{method}(" if function else f".{method}("
        text_of = {file: text for file, text in self._importers_upto if needle in text}
        named = list(text_of)
        if len(named) > _CALLERS_PER_METHOD or len(set(named) | self._callers.keys()) > _CALLER_FILES:
            return None
        sites: list[Ranks] = []
        for file in named:
            if file not in self._callers:
                self._callers[file] = self._called(file, self._subclassed_in(text_of[file]))
            reader = self._callers[file]
            sites += reader(method, function) if reader is not None else []
        if not sites:
            return None
        where = sites[0]
        for ranks in sites[1:]:
            where = where | ranks
        return where

    def _subclassed_in(self, text: str) -> bool:
        """``text`` (an importing file) defines a class on a base this file defines."""
        return bool(self._class_names) and re.search(rf"^[ \t]*class \w+\((\w+\.)*({self._class_names})\b", text, re.M) is not None

    @functools.cached_property
    def _class_names(self) -> str:
        return "|".join(re.findall(r"^class (\w+)", self._text(), re.M))

    def sharded_elsewhere(self, callee: str, parameter: str, index: int, *, method: bool) -> list[bool]:
        """For each call in the project's files that import this one (up to five imports up)
        that hands ``callee``'s ``parameter`` a loader with a distributed sampler
        (``utils_fit.fit_one_epoch(..., gen_val, ...)`` in train.py): whether the calling
        function combines anything across processes. Empty when none does or none can be read."""
        if self._handed is None or self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return []
        named = [file for file, text in self._importers_upto if f"{callee}(" in text]
        if len(named) > _CALLERS_PER_METHOD:
            return []
        found: list[bool] = []
        for file in named[:_CALLER_FILES]:
            found += self._handed(file, callee, parameter, index, method) or []
        return found

    @functools.cached_property
    def _importers_upto(self) -> list[tuple[Path, str]]:
        """The project files importing this one, five imports up (asked once per file)."""
        assert self._path is not None
        return project_files.importers_upto(Path(self._path))

    def may_be_called_elsewhere(self, name: str) -> bool:
        """Whether a project file that imports this one (five imports up) may call a function
        or method named ``name``: its text names it. A file with a path but no project reading
        (depth 0) may be called by anything; a source without a file by nothing."""
        if self._path is None or not Path(self._path).is_file():
            return False
        return self.depth <= 0 or any(name in text for _, text in self._importers_upto)

    def passed_elsewhere(self, callee: str, parameter: str, index: int, *, truth: bool = False) -> list[tuple[Ranks, Ranks | None]] | None:
        """What the project's files that import this one pass ``callee``'s ``parameter`` (see
        ``Outside``); None when none of them calls it or one call cannot be read."""
        if self._outside is None or self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return None
        found: list[tuple[Ranks, Ranks | None]] = []
        for file in project_files.importers(Path(self._path)):
            calls = self._outside(file, callee, parameter, index, truth)
            if calls is None:
                return None
            found.extend(calls)
        return found or None

    def on_import(self, statement: cst.CSTNode) -> list[Helper]:
        """What importing the project modules an import statement names does (their ``ON_IMPORT``
        facts: print replaced for the other ranks, torch seeded), itself or through their imports."""
        if self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return []
        files = project_files.imported_files(code(statement), Path(self._path))
        return [h for f in files if (h := module_helpers(f, self.depth, self._summarise).get(ON_IMPORT)) is not None]

    @functools.cached_property
    def wrapped_elsewhere(self) -> bool:
        """A project file importing this one (five imports up) wraps a model in DDP: this
        module's training functions (a trainer's ``train(net, ...)``) may be handed the wrapper."""
        if self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return False
        return any("DistributedDataParallel" in text for _, text in self._importers_upto)

    @functools.cached_property
    def imported_elsewhere(self) -> bool:
        """Another file of the project imports this one (or that cannot be told: no path)."""
        if self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return True
        return bool(self.importers)

    @functools.cached_property
    def importers(self) -> list[Path]:
        """The project files that import this one directly (none without a path to read from)."""
        if self.depth <= 0 or self._path is None or not Path(self._path).is_file():
            return []
        return project_files.importers(Path(self._path))

    @functools.cached_property
    def _bindings(self) -> dict[str, tuple[Path, str | None]]:
        importer = Path(self._path) if self._path else None
        found: dict[str, tuple[Path, str | None]] = {}
        if self.depth <= 0 or importer is None or not importer.is_file():
            return found
        for item in project_files.imports(self._text()):
            target = project_files.module_file(item.module, item.level, importer)
            if target is None:
                continue
            inner = project_files.submodule(target, item.name) if item.name is not None else None
            found[item.bound] = (inner, None) if inner is not None else (target, item.name)
        return found

    def helper(self, call: cst.Call) -> Helper | None:
        """The helper ``call`` runs (``Helper()`` for a function that does none of these
        things), or None: not a project function, or one it cannot read."""
        if not (self._bindings or self._star_files) or not is_simple_reference(call.func):
            return None
        return self.named(code(call.func))

    def imports_mention(self, text: str) -> bool:
        """A project module this file imports contains ``text`` (``.local_rank``: a helper it hands
        its options to may read that one)."""
        files = {path for path, _ in self._bindings.values()} | set(self._star_files)
        for file in files:
            try:
                if text in file.read_text(encoding="utf-8"):
                    return True
            except (OSError, UnicodeDecodeError):
                continue
        return False

    def defines_function(self, name: str) -> bool:
        """``name``, as this file imports it, is a function a project module defines at its top
        level (``from runtime.distributed_utils import is_main_process``)."""
        bound = self._bindings.get(name)
        if bound is None or bound[1] is None:
            return False
        home, defined = project_files.defining_module(bound[0], bound[1])
        try:
            text = home.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        return re.search(rf"^(async\s+)?def {re.escape(defined)}\s*\(", text, re.M) is not None

    def home_of(self, dotted: str) -> Path | None:
        """The project module that defines the callee ``dotted`` as this file names it (``utils.save``,
        ``save`` of ``from utils import save`` or of ``from utils import *``), or None."""
        head = dotted.split(".", 1)[0]
        bound = self._bindings.get(head)
        if bound is not None:
            return bound[0] if bound[1] is None else project_files.defining_module(bound[0], bound[1])[0]
        return next((f for f in self._star_files if head in module_helpers(f, self.depth, self._summarise)), None)

    def file_of(self, name: str) -> Path | None:
        """The project file that a name this file imports comes from (``DeepSVDD`` of ``from
        deepSVDD import DeepSVDD``), or None."""
        bound = self._bindings.get(name)
        return bound[0] if bound is not None else None

    def named(self, dotted: str) -> Helper | None:
        """The helper a dotted callee (``utils.misc.is_main_process``) names, or None."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            bound = self._bindings.get(".".join(parts[:cut]))
            if bound is None:
                continue
            file: Path | None = bound[0]
            rest = ([bound[1]] if bound[1] is not None else []) + parts[cut:]
            while len(rest) > 1 and file is not None:
                method = module_helpers(file, self.depth, self._summarise).get(".".join(rest))
                if method is not None:  # `Trainer.step`: a method of a class of that module
                    return method
                inner = project_files.submodule(file, rest[0])
                if inner is None:  # `Model.__init__` of a class the package's __init__ re-exports
                    home, name = project_files.defining_module(file, rest[0])
                    return module_helpers(home, self.depth, self._summarise).get(".".join([name, *rest[1:]])) if home != file else None
                file, rest = inner, rest[1:]
            if file is not None and not rest and file.name != "__init__.py":
                # `from datasets import make_dataloader` then `make_dataloader(cfg)`: a module is not
                # called; the package's __init__ re-exports the function of that name
                package = file.with_name("__init__.py")
                return module_helpers(package, self.depth, self._summarise).get(file.stem) if package.is_file() else None
            if file is None or len(rest) != 1:
                return None
            file, name = project_files.defining_module(file, rest[0])
            return module_helpers(file, self.depth, self._summarise).get(name)
        if len(parts) <= 2:  # `from utils import *` then `prepare_folders(args)`, `Glow_.__init__`
            found = (module_helpers(f, self.depth, self._summarise).get(dotted) for f in self._star_files)
            return next((helper for helper in found if helper is not None), None)
        return None

    def star_exported(self) -> dict[str, Helper]:
        """The helpers this file's ``from module import *`` statements bring in (a package's
        ``__init__.py`` re-exporting its modules), the last import winning a clash."""
        found: dict[str, Helper] = {}
        package = self._path is not None and Path(self._path).name == "__init__.py"
        for file in self._star_files:  # last import first
            # a package's own modules re-exported by its __init__.py cost no import level: read as deep as it is
            inside = package and self._path is not None and file.resolve().parent == Path(self._path).resolve().parent
            depth = self.depth + 1 if inside and file not in _READING else self.depth
            _READING.add(file)
            try:
                helpers = module_helpers(file, depth, self._summarise)
            finally:
                _READING.discard(file)
            for name, helper in helpers.items():
                if name != ON_IMPORT:
                    found.setdefault(name, helper)
        return found

    @functools.cached_property
    def _star_files(self) -> list[Path]:
        """The project modules this file star-imports, last import first (it wins a clash)."""
        importer = Path(self._path) if self._path else None
        if self.depth <= 0 or importer is None or not importer.is_file():
            return []
        found = (project_files.module_file(module, level, importer) for module, level in project_files.star_imports(self._text()))
        return [f for f in reversed(list(found)) if f is not None and f.is_file()]


_READING: set[Path] = set()  # the star-exported modules being read deeper, against a cycle of star imports


def module_helpers(file: Path, depth: int, summarise: Summarise) -> dict[str, Helper]:
    """The module-level functions of one project module and those it re-exports, each with
    its facts (``summarise``'s, cached per path and version of the file)."""
    try:
        stat = file.stat()
    except OSError:
        return {}
    return _module_helpers(file.resolve(), stat.st_mtime_ns, stat.st_size, depth, summarise)


@functools.lru_cache(maxsize=128)
def _module_helpers(file: Path, mtime_ns: int, size: int, depth: int, summarise: Summarise) -> dict[str, Helper]:
    del mtime_ns, size  # the cache key: a changed file is read again
    try:
        text = file.read_text(encoding="utf-8")
        module = cst.parse_module(text)
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return {}
    return summarise(module, str(file), depth - 1)


def library_objects(module: cst.Module, path: str) -> list[str]:
    """Module-level names bound to a call of what an import from outside the project names
    (``from yacs.config import CfgNode as CN`` then ``cfg = CN()``)."""
    imported = {item.bound: item for item in project_files.imports(module.code)}
    found: list[str] = []
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
            continue
        value = small.value
        item = imported.get(code(value.func).split(".")[0]) if isinstance(value, cst.Call) else None
        if item is not None and project_files.module_file(item.module, item.level, Path(path)) is None:
            found.append(small.targets[0].target.value)
    return found
