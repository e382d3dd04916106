"""The DDP analysis shared by the converter (``ddpify.convert``) and the linter
(``ddpify.check``): one module per concept, each the only definition of it.

``Analysis(wrapper)`` is built once per file; each concept is computed on first use and
cached, so a rule or planner that never asks about data flow never pays for it. When an
analysis cannot establish a fact it answers "unknown", and both sides then report instead of
acting.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from ddpify.analysis.context import Context
    from ddpify.analysis.dataflow import DataFlow
    from ddpify.analysis.loops import Loops
    from ddpify.analysis.models import ModelFlow
    from ddpify.analysis.output import Output
    from ddpify.analysis.project import Helper
    from ddpify.analysis.rank_tests import RankTests
    from ddpify.analysis.ranks import Ranks
    from ddpify.analysis.samplers import Samplers
    from ddpify.analysis.source import Source


class Analysis:
    """Every concept of one file, computed on first use."""

    def __init__(self, wrapper: MetadataWrapper, path: str | None = None, depth: int | None = None, importers: bool = True) -> None:
        """``path``: the file's path, whose project's imported modules are read for facts
        (``ddpify.analysis.project``) ``depth`` imports deep (None: the default depth), and with
        ``importers`` the project files that import it (where its functions are called)."""
        from ddpify.analysis import project_files
        from ddpify.analysis.project import Project
        from ddpify.analysis.source import Source

        read = project_files.DEPTH if depth is None else depth
        around = (passed_at, called_at, handed_at) if importers else (None, None, None)
        project = Project(lambda: wrapper.module.code, path, read, summarise, *around)
        self.source: Source = Source(wrapper, project)
        self._path = path if depth is None or depth > 0 else None

    @functools.cached_property
    def dataflow(self) -> DataFlow:
        """Batch sources, where their batches go, and their roles (train / eval / unknown)."""
        from ddpify.analysis.dataflow import DataFlow

        return DataFlow(self.source)

    @functools.cached_property
    def models(self) -> ModelFlow:
        """Trained and wrapped models: construction, moves, loads, wraps, calls, placement."""
        from ddpify.analysis.models import ModelFlow

        return ModelFlow(self.source, self.dataflow)

    @functools.cached_property
    def rank_tests(self) -> RankTests:
        """Which ranks an expression selects (``rank == 0``, ``args.local_rank in [-1, 0]``)."""
        from ddpify.analysis.rank_tests import RankTests

        # a flag's assignments are weighed by where they run, which the context knows
        return RankTests(self.source, where=lambda node: self.context.local(node))

    @functools.cached_property
    def context(self) -> Context:
        """Which ranks / branch / process run a statement."""
        from ddpify.analysis.context import Context

        return Context(self.source, self.rank_tests, lambda: self.dataflow)

    @functools.cached_property
    def output(self) -> Output:
        """Prints silenced for the other ranks, output tagged per rank, files per rank."""
        from ddpify.analysis.output import Output

        return Output(self.source, self.context)

    @functools.cached_property
    def loops(self) -> Loops:
        """Epoch loops and the loaders a loop iterates."""
        from ddpify.analysis.loops import Loops

        return Loops(self.source)

    @functools.cached_property
    def training_functions(self) -> set[cst.FunctionDef]:
        """The functions that train, themselves or through this file's functions they call."""
        return _training(self.source)

    @functools.cached_property
    def samplers(self) -> Samplers:
        """The distributed samplers and the loaders that draw through them."""
        from ddpify.analysis.samplers import Samplers

        return Samplers(self.source)

    @functools.cached_property
    def single_node(self) -> bool:
        """The script can only run on one node (``ddpify.analysis.topology``); so can a module
        that does not join the process group itself when the project files that import it
        (``tools/train.py`` of a trainer module, up to five imports up) and join it are all
        single-node ones."""
        from ddpify.analysis.topology import single_node

        if single_node(self.source):
            return True
        if self._path is None or "init_process_group" in self.source.calls_by_callee:
            return False
        return launched_on_one_node(Path(self._path))


def summarise(module: cst.Module, path: str, depth: int) -> dict[str, Helper]:
    """A project module's helpers: each module-level function with what the checked file's own
    analyses say of it (rank tests, print overrides, spawns, prefix-aware loads), and the names
    it re-exports from its own project, read ``depth`` imports deep."""
    import libcst as cst

    from ddpify.analysis import loggers, project_files, star_imports
    from ddpify.analysis.callgraph import CallGraph
    from ddpify.analysis.collectives import module_collectives, module_opt_in_collectives
    from ddpify.analysis.console_logging import logging_facts
    from ddpify.analysis.distributed_code import (
        device_setting_functions,
        distributed_classes,
        distributed_functions,
        joining_functions,
        spawned_parameter,
    )
    from ddpify.analysis.flag_setters import class_flags, flag_setters
    from ddpify.analysis.keyed_results import keying_parameters
    from ddpify.analysis.launch_args import local_rank_declarers, local_rank_replacers
    from ddpify.analysis.loads import unmapped_loaders
    from ddpify.analysis.loggers import cache_writers, file_writer_classes, module_console_loggers, path_makers, writer_factories
    from ddpify.analysis.module_classes import class_facts, unused_submodules_of
    from ddpify.analysis.modules import DDP_WRAPS, name_readers
    from ddpify.analysis.optimizers import optimizer_classes
    from ddpify.analysis.output import argument_changers, writing_functions
    from ddpify.analysis.own_training import module_methods
    from ddpify.analysis.prefix import names_prefix
    from ddpify.analysis.project import ON_IMPORT, Helper, library_objects
    from ddpify.analysis.running_metrics import returned_metrics
    from ddpify.analysis.seeding import module_draws, module_torch_seeders, seeding
    from ddpify.analysis.set_orders import set_ordering_functions
    from ddpify.tree.metadata import FastMetadata

    analysis = Analysis(FastMetadata(module, star_imports.resolver(path)), path, depth)
    source, rank_tests = analysis.source, analysis.rank_tests
    silencing = analysis.output.print_overriding_functions()
    training = analysis.training_functions
    tops = [f for fs in source.functions.values() for f in fs if source.enclosing_function(f) is None and source.enclosing_class(f) is None]
    consoles = module_console_loggers(source, analysis.context, tops)
    levels, quieting, standard_loggers = logging_facts(source, analysis.context, tops)
    event_writers = writer_factories(source, tops, training)
    every = [f for fs in source.functions.values() for f in fs]
    ordering = set_ordering_functions(source, every)
    collectives = module_collectives(source, analysis.context, tops)
    opt_in, draws = module_opt_in_collectives(source, tops, collectives), module_draws(source, tops)
    torch_seeders = module_torch_seeders(source, tops)
    distributed = distributed_functions(source, every)
    joining = joining_functions(source, every)
    setting = device_setting_functions(source, every)
    flags = flag_setters(source, rank_tests.where, rank_tests.combine, tops)
    writes = writing_functions(source, every)
    changers = argument_changers(source, every)
    unmapped = unmapped_loaders(source, tops, analysis.output.per_rank_file)
    helpers: dict[str, Helper] = {}
    for name, functions in source.functions.items():
        top = [f for f in functions if source.enclosing_function(f) is None and source.enclosing_class(f) is None]
        if len(top) != 1:
            continue
        function = top[0]
        calls = source.of_types_in(function, cst.Call)
        loads = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "load_state_dict" for c in calls)
        helpers[name] = Helper(
            rank_tests.function_flag(function),
            rank_tests.function_number(function),
            function in silencing,
            spawned_parameter(source, function),
            loads and names_prefix(function),
            loads,
            seeding(source, rank_tests, function),
            function in training,
            consoles.get(function),
            analysis.samplers.returns_sampler(function),
            collectives.get(function),
            analysis.samplers.returned_loaders(function),
            draws.get(name, frozenset()),
            distributed=function in distributed,
            joins_group=function in joining,
            strips_prefix=names_prefix(function),
            decorates=analysis.context.decorator(function),
            sets_flags=flags.get(function, ()),
            writes=function in writes,
            flag_defaults=rank_tests.defaults_read.get(function, frozenset()),
            changes_arguments=function in changers,
            returns_writer=function in event_writers,
            orders_sets=function in ordering,
            padded_loaders=analysis.samplers.padded_loaders(function),
            sets_device=function in setting,
            loads_unmapped=function in unmapped,
            console_level=levels.get(function),
            quiets_logging=function in quieting,
            opt_in_collective=opt_in.get(function),
            seeds_torch=name in torch_seeders,
        )
    for function in sorted(training | writes, key=source.line):  # a method that trains or writes (`CheckpointIO.save`)
        owner = source.enclosing_class(function)
        if owner is not None and source.enclosing_function(function) is None and source.enclosing_class(owner) is None:
            method = Helper(
                trains=function in training,
                writes=function in writes,
                distributed=function in distributed,
                changes_arguments=function in changers,
            )
            helpers.setdefault(f"{owner.name.value}.{function.name.value}", method)
            if function in training:  # building the class lets its training steps run
                built = f"{owner.name.value}.__init__"
                helpers[built] = dataclasses.replace(helpers.get(built, Helper()), trains=True)
    for function, slots in returned_metrics(source, sorted(training, key=source.line)).items():  # `trainer.train_network(loader)`
        owner = source.enclosing_class(function)
        key = function.name.value if owner is None else f"{owner.name.value}.{function.name.value}"
        if key in helpers and source.enclosing_function(function) is None:
            helpers[key] = dataclasses.replace(helpers[key], returns_metrics=slots)
    for function in tops:  # evaluate(model, ..., data_loader, ...) keeping predictions by image id
        keying = keying_parameters(source, function)
        if keying and function.name.value in helpers:
            helpers[function.name.value] = dataclasses.replace(helpers[function.name.value], keys_batches=keying)
    for function in ordering:  # a class one of whose methods orders a set: building it may run that
        owner = source.enclosing_class(function)
        if owner is not None and source.enclosing_class(owner) is None and source.enclosing_function(owner) is None:
            key = f"{owner.name.value}.__init__"
            helpers[key] = dataclasses.replace(helpers.get(key, Helper()), orders_sets=True)
    for name, families in draws.items():  # a class: `Model.__init__`
        if "." in name:
            helpers[name] = dataclasses.replace(helpers.get(name, Helper()), draws=families)
    for name, unused in unused_submodules_of(source, tops).items():
        helpers[name] = dataclasses.replace(helpers.get(name, Helper()), unused_submodules=unused)
    for name, (dropped, registered) in class_facts(source).items():
        helpers[name] = dataclasses.replace(helpers.get(name, Helper()), dropped_outputs=dropped, submodules=registered)
    for function in writes:  # a class one of whose methods writes: `Logger.__init__`
        owner = source.enclosing_class(function)
        if owner is not None and source.enclosing_class(owner) is None and source.enclosing_function(owner) is None:
            key = f"{owner.name.value}.__init__"
            on_build = function.name.value == "__init__"  # CSVLogger opens its file when built
            helpers[key] = dataclasses.replace(
                helpers.get(key, Helper()), writes=True, writes_when_built=on_build or helpers.get(key, Helper()).writes_when_built
            )
    for name in distributed_classes(source, distributed):
        key = f"{name}.__init__"
        helpers[key] = dataclasses.replace(helpers.get(key, Helper()), distributed=True)
    for name in path_makers(source, tops) & helpers.keys():
        helpers[name] = dataclasses.replace(helpers[name], makes_paths=True)
    for function in tops:  # create_ddp_model(model): DistributedDataParallel(model, ...) in its body
        if any(source.qualified(c) & DDP_WRAPS for c in source.of_types_in(function, cst.Call)) and function.name.value in helpers:
            helpers[function.name.value] = dataclasses.replace(helpers[function.name.value], wraps_ddp=True)
    for name in cache_writers(source, tops) & helpers.keys():
        helpers[name] = dataclasses.replace(helpers[name], writes_cache=True)
    for name in local_rank_replacers(source) & helpers.keys():
        helpers[name] = dataclasses.replace(helpers[name], replaces_local_rank=True)
    for name in local_rank_declarers(source):
        helpers[name] = dataclasses.replace(helpers.get(name, Helper()), declares_local_rank=True)
    for name in file_writer_classes(source, training):
        key = f"{name}.__init__"
        helpers[key] = dataclasses.replace(helpers.get(key, Helper()), writes_files=True)
    for name, methods in module_methods(CallGraph(source)).items():
        key = f"{name}.__init__"
        helpers[key] = dataclasses.replace(helpers.get(key, Helper()), module_methods=methods)
    for function, positions in name_readers(source, every).items():  # `EMAHelper.register(module)`
        owner = source.enclosing_class(function)
        key = f"{owner.name.value}.{function.name.value}" if owner is not None else function.name.value
        if source.enclosing_function(function) is None and (owner is None or source.enclosing_class(owner) is None):
            helpers[key] = dataclasses.replace(helpers.get(key, Helper()), reads_names=positions)
    for function in loggers.run_starters(source, analysis.context, every):  # `setup_wandb(args)`, `WandbLogger.__init__`
        owner = source.enclosing_class(function)
        key = function.name.value if owner is None else f"{owner.name.value}.__init__"
        if source.enclosing_function(function) is None and (owner is None or source.enclosing_class(owner) is None):
            helpers[key] = dataclasses.replace(helpers.get(key, Helper()), starts_run=True)
    for name, attribute_flags in class_flags(source, rank_tests.where, rank_tests.combine).items():
        key = f"{name}.__init__"
        helpers[key] = dataclasses.replace(helpers.get(key, Helper()), attribute_flags=attribute_flags)
    for klass in module.body:  # every class is read: building one that does none of these things is no unknown
        if isinstance(klass, cst.ClassDef):
            helpers.setdefault(f"{klass.name.value}.__init__", Helper())
    for name in library_objects(module, path):  # `cfg = CN()` of yacs, `logger = logging.getLogger(__name__)`
        helpers.setdefault(name, Helper(library_object=True, logging_logger=name in standard_loggers))
    for name in analysis.output.stdout_redirecting_classes():  # `with HiddenPrints(rank):`
        key = f"{name}.__init__"
        helpers[key] = dataclasses.replace(helpers.get(key, Helper()), redirects_stdout=True)
    for name in optimizer_classes(source):
        key = f"{name}.__init__"
        helpers[key] = dataclasses.replace(helpers.get(key, Helper()), optimizer_class=True)
    if analysis.output.silences_on_import():
        helpers[ON_IMPORT] = Helper(silences_print=True)
    for name in torch_seeders - set(source.functions):  # a class (`Class.__init__`), or the module's own import
        helpers[name] = dataclasses.replace(helpers.get(name, Helper()), seeds_torch=True)
    for statement in module.body:  # `arg = argument`: another name for a function of the module
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            if isinstance(small.value, cst.Name) and small.value.value in helpers:
                helpers.setdefault(small.targets[0].target.value, helpers[small.value.value])
    for name, helper in source.project.star_exported().items():  # `from .printing import *` in a package
        helpers.setdefault(name, helper)
    for item in project_files.imports(module.code):  # re-exports: `from .dist import is_main_process`
        if item.name is not None and item.bound not in helpers:
            found = source.project.named(item.bound)
            if found is not None:
                helpers[item.bound] = found
    return helpers


def launched_on_one_node(path: Path) -> bool:
    """Some project file importing ``path`` (directly or through up to four more: a package's
    ``__init__.py`` re-exporting it counts as one) joins the process group, and every such file
    is single-node (``ddpify.analysis.topology``)."""
    from ddpify.analysis import project_files

    launchers: list[bool] = []
    for file, text in project_files.importers_upto(path):
        if "init_process_group" not in text:
            continue
        try:
            stat = file.stat()
        except OSError:
            continue
        joined = _joins_on_one_node(file, stat.st_mtime_ns)
        if joined is not None:
            launchers.append(joined)
    return bool(launchers) and all(launchers)


def _joins_on_one_node(file: Path, mtime_ns: int) -> bool | None:
    """Whether ``file``, if it joins the process group, can only run on one node; None when it
    does not join it (or cannot be read)."""
    from ddpify.analysis.topology import single_node

    analysis = importer_analysis(file, mtime_ns)
    if analysis is None or "init_process_group" not in analysis.source.calls_by_callee:
        return None
    return single_node(analysis.source)


def called_at(file: Path, with_imports: bool) -> Callable[[str, bool], list[Ranks]] | None:
    """``Called`` for one importing file, read once: where each of its ``x.method(...)`` calls
    runs (its own conditions and its callers'), per method name, or (``function``) its calls
    of a function of that name, which in a file with no distributed code at all (an evaluation
    script run as one process) only the one process runs; ``with_imports``: read with its
    imports. None when it cannot be read."""
    try:
        stat = file.stat()
    except OSError:
        return None
    analysis = importer_analysis(file, stat.st_mtime_ns, 1 if with_imports else 0)  # `if self.verbose:` of a base class
    if analysis is None:
        return None
    import libcst as cst

    from ddpify.analysis.distributed_code import mentions_distribution
    from ddpify.analysis.ranks import SOLO, Ranks

    alone = not mentions_distribution(analysis.source.module.code)

    def sites(name: str, function: bool) -> list[Ranks]:
        calls = analysis.source.calls_by_callee.get(name, [])
        kinds = (cst.Name, cst.Attribute) if function else (cst.Attribute,)
        solo = alone and function  # a method's callers say where it runs as before (the converter relies on it)
        kept = [c for c in calls if isinstance(c.func, kinds) and (function or not analysis.source.calls_imported_module(c))]
        return [Ranks(SOLO, SOLO) if solo else analysis.context.ranks(c) for c in kept]

    return sites


def handed_at(file: Path, callee: str, parameter: str, index: int, method: bool) -> list[bool] | None:
    """``Handed`` for one importing file, read with the modules it imports (the loaders a
    ``make_dataloader(cfg)`` of its own project returns are known): for each call of ``callee``
    (``x.callee(...)`` for a method) handing ``parameter`` a loader with a distributed sampler,
    whether its function (or the module level) reduces anything."""
    try:
        stat = file.stat()
    except OSError:
        return None
    analysis = importer_analysis(file, stat.st_mtime_ns, 1)
    if analysis is None:
        return None
    import libcst as cst

    from ddpify.analysis.collectives import reduces
    from ddpify.analysis.presence import passed_argument
    from ddpify.tree.cstutil import code, is_simple_reference

    source = analysis.source
    found: list[bool] = []
    for call in source.calls_by_callee.get(callee, []):
        head = code(call.func).split(".")[0] if is_simple_reference(call.func) else None
        if not (isinstance(call.func, cst.Attribute) if method else head not in (None, "self", "cls")):
            continue  # a method is called on an object; a function by its name or its module's
        value = passed_argument(call, parameter, index)
        if value is None or not analysis.samplers.is_sharded_loader(value):
            continue
        caller = source.enclosing_function(call)
        scope = (
            source.of_types_in(caller, cst.Call)
            if caller is not None
            else [c for c in source.of_types(cst.Call) if source.enclosing_function(c) is None]
        )
        found.append(any(reduces(source, c) for c in scope))
    return found


@functools.lru_cache(maxsize=32)
def importer_analysis(file: Path, mtime_ns: int, depth: int = 0) -> Analysis | None:
    """A project file read ``depth`` imports deep (0: on its own), once per version; never its
    own importers (a chain of them would read the whole project, recursively)."""
    del mtime_ns  # the cache key: a changed file is read again
    return _read(file, depth, importers=False)


def _read(file: Path, depth: int, *, importers: bool) -> Analysis | None:
    """The analysis of another project file (None where it cannot be read or parsed)."""
    import libcst as cst

    from ddpify.analysis import star_imports
    from ddpify.tree.metadata import FastMetadata

    try:
        wrapper = FastMetadata(cst.parse_module(file.read_text(encoding="utf-8")), star_imports.resolver(str(file)))
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return None
    return Analysis(wrapper, str(file), depth=depth, importers=importers)


def passed_at(file: Path, callee: str, parameter: str, index: int, truth: bool) -> list[tuple[Ranks, Ranks | None]] | None:
    """``Outside`` for one importing file: its calls of ``callee`` (by the name it imports),
    each with where it runs and where the argument for ``parameter`` is an object (with
    ``truth``: where it is true, None where the call passes none)."""
    try:
        stat = file.stat()
    except OSError:
        return None
    return _passed_at(file, stat.st_mtime_ns, callee, parameter, index, truth)


@functools.lru_cache(maxsize=64)
def _passed_at(file: Path, mtime_ns: int, callee: str, parameter: str, index: int, truth: bool) -> list[tuple[Ranks, Ranks | None]] | None:
    del mtime_ns  # the cache key: a changed file is read again
    from ddpify.analysis.presence import passed_argument
    from ddpify.tree.cstutil import code, is_simple_reference

    analysis = _read(file, 0, importers=True)
    if analysis is None:
        return None
    found: list[tuple[Ranks, Ranks | None]] = []
    for call in analysis.source.calls_by_callee.get(callee, []):
        if truth and not is_simple_reference(call.func):
            return None  # `Trainer().fit(..., log=True)`: a call of that name this reading cannot place
        if not is_simple_reference(call.func) or not code(call.func).endswith(callee):
            continue
        if truth:
            if any(a.star for a in call.args):
                return None
            value = passed_argument(call, parameter, index)
            found.append((analysis.rank_tests.where(call), None if value is None else analysis.rank_tests.ranks(value)))
            continue
        passed = analysis.rank_tests.presence.argument(call, parameter, index)
        if passed is None:
            return None
        found.append(passed)
    return found


def _training(source: Source) -> set[cst.FunctionDef]:
    """The functions that call ``backward`` / an optimizer ``step`` / ``zero_grad``, also
    through functions and methods of the same module that do (``self.do_pass(...)``)."""
    import libcst as cst

    from ddpify.tree.cstutil import is_method_call

    every = [f for functions in source.functions.values() for f in functions]
    found = {f for f in every if any(is_method_call(c, "backward", "step", "zero_grad") for c in source.of_types_in(f, cst.Call))}
    grown = True
    while grown:
        grown = False
        for function in every:
            if function not in found and any(set(source.functions_called(c)) & found for c in source.of_types_in(function, cst.Call)):
                found.add(function)
                grown = True
    return found
