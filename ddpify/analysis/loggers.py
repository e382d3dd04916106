"""Loggers that print on every rank: a helper that attaches a console handler
(``logging.StreamHandler()``) to the logger it returns, with no rank test around the handler
or the level, hands every rank a logger whose ``info`` prints (SwAV's
``initialize_exp`` -> ``create_logger``). A helper that adds the handler, or a level that lets
``info`` through, on rank 0 only returns a rank-0 logger and is not one of these."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.module_facts import through_calls
from ddpify.tree.cstutil import code, is_method_call

if TYPE_CHECKING:
    from ddpify.analysis.context import Context
    from ddpify.analysis.source import Source

WHOLE = -1  # the helper returns the logger itself (else: its index in the returned tuple)
# TensorBoard event writers: each one made writes an event file of its own into its folder.
SUMMARY_WRITERS = frozenset(
    {
        "torch.utils.tensorboard.SummaryWriter",
        "torch.utils.tensorboard.writer.SummaryWriter",
        "tensorboardX.SummaryWriter",
        "tensorboardX.writer.SummaryWriter",
    }
)
_CONSOLE = frozenset({"logging.StreamHandler", "rich.logging.RichHandler"})


def console_logger(source: Source, context: Context, function: cst.FunctionDef, called: Callable[[cst.Call], int | None]) -> int | None:
    """Where ``function``'s result is a logger with a console handler on every rank: ``WHOLE``,
    the index of the tuple element that is, or None. ``called(call)`` answers the same for a
    helper it calls (``logger = create_logger(...)``)."""
    calls = [c for c in source.of_types_in(function, cst.Call) if source.enclosing_function(c) is function]
    if quieted_by_rank(source, context, calls, function):
        return None  # a quieter level on the other ranks
    loggers = _console_loggers(source, context, calls, called)
    for ret in source.of_types_in(function, cst.Return):
        if not isinstance(ret, cst.Return) or ret.value is None or source.enclosing_function(ret) is not function:
            continue
        if code(ret.value) in loggers:
            return WHOLE
        if isinstance(ret.value, cst.Tuple):
            for index, element in enumerate(ret.value.elements):
                if code(element.value) in loggers:
                    return index
    return None


_LEVEL_NAMES = re.compile(r"\b(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b", re.I)


def leveled_by_rank(call: cst.Call, depends_on_rank: Callable[[cst.BaseExpression], bool]) -> bool:
    """A logger helper handed a level the rank decides (``get_logger(name, logging.INFO if
    rank == 0 else logging.ERROR)``): the logger it makes is quieter on the other ranks."""
    return any(_LEVEL_NAMES.search(code(a.value)) and depends_on_rank(a.value) for a in call.args)


def quieted_by_rank(source: Source, context: Context, calls: list[cst.Call], function: cst.FunctionDef | None) -> bool:
    """A logger's level or switch decided by the rank, in ``function`` (the whole file when
    None): ``setLevel(INFO if rank == 0 else WARN)``, a ``setLevel`` or ``logger.disabled =
    True`` that only some ranks run (``if rank != 0:``)."""
    for call in calls:
        if (
            is_method_call(call, "setLevel")
            and call.args
            and (context.rank_tests.depends_on_rank(call.args[0].value) or context.selection(call).rank_dependent)
        ):
            return True
    for statement in source.of_types(cst.Assign) if function is None else source.of_types_in(function, cst.Assign):
        switched = any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "disabled" for t in statement.targets)
        if switched and (context.selection(statement).rank_dependent or context.rank_tests.depends_on_rank(statement.value)):
            return True
    return False


def _console_loggers(source: Source, context: Context, calls: list[cst.Call], called: Callable[[cst.Call], int | None]) -> set[str]:
    """The names in ``calls``' function bound to a logger that prints on every rank."""
    found: set[str] = set()
    for call in calls:
        if is_method_call(call, "addHandler") and call.args and context.every_rank(call) and console_handler(source, call.args[0].value):
            found.add(code(call.func.value))  # type: ignore[attr-defined]
        elif called(call) == WHOLE:
            parent = source.parent(call)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                found.add(code(parent.targets[0].target))
    return found


def module_console_loggers(source: Source, context: Context, functions: list[cst.FunctionDef]) -> dict[cst.FunctionDef, int]:
    """``console_logger`` of each of a module's ``functions``, following calls to the module's
    own functions and to the project helpers it imports (``Helper.console_logger``)."""
    return through_calls(
        source, functions, lambda function, called: console_logger(source, context, function, called), lambda helper: helper.console_logger
    )


def console_handler(source: Source, handler: cst.BaseExpression) -> bool:
    values = [handler]
    if isinstance(handler, cst.Name):
        values += [v for _, v in source.assignments.get(handler.value, []) if v is not None]
    return any(isinstance(v, cst.Call) and source.qualified(v) & _CONSOLE for v in values)


_OPEN = frozenset({"builtins.open", "io.open"})
# logging handlers that write a file (a rank building one appends to the shared log).
_FILE_HANDLERS = frozenset(
    {
        "logging.FileHandler",
        "logging.handlers.RotatingFileHandler",
        "logging.handlers.TimedRotatingFileHandler",
        "logging.handlers.WatchedFileHandler",
    }
)


def file_writer_classes(source: Source, training: set[cst.FunctionDef]) -> set[str]:
    """The module's top-level plain classes (no base but ``object``: not a ``Dataset`` that
    caches its files, not a model) that write files and do nothing else the ranks share: a
    method opens a file for writing or appending (``CSVLogger.__init__``: ``open(filename,
    "w")``), builds a TensorBoard event writer or a logging file handler (CIFAR-ZOO's ``Logger`` whose ``get_log()`` hands
    out a logger writing log.txt), none trains (``training``) or runs a collective. Built on
    every rank, each rank truncates and appends to the same file."""
    found: set[str] = set()
    for klass in source.of_types(cst.ClassDef):
        assert isinstance(klass, cst.ClassDef)
        if source.enclosing_class(klass) is not None or source.enclosing_function(klass) is not None:
            continue
        if any(code(base.value) != "object" for base in klass.bases):
            continue  # a Dataset, a Module, a subclass of anything: other code needs its data on every rank
        methods = [f for f in source.of_types_in(klass, cst.FunctionDef) if source.enclosing_class(f) is klass]
        calls = [c for c in source.of_types_in(klass, cst.Call) if isinstance(c, cst.Call)]
        if any(m in training for m in methods) or any(any(q.startswith("torch.distributed.") for q in source.qualified(c)) for c in calls):
            continue
        if any(source.qualified(c) & _OPEN and _writes(c) or source.qualified(c) & (_FILE_HANDLERS | SUMMARY_WRITERS) for c in calls):
            found.add(klass.name.value)
    return found


def writer_factories(source: Source, functions: list[cst.FunctionDef], training: set[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Of ``functions``, those that return a TensorBoard event writer they make (``return
    SummaryWriter(log_dir)``, or a variable of theirs bound to one) and neither train nor run a
    collective: built on every rank, each rank writes an event file of its own."""
    found: set[cst.FunctionDef] = set()
    for function in functions:
        calls = [c for c in source.of_types_in(function, cst.Call) if isinstance(c, cst.Call)]
        if function in training or any(any(q.startswith("torch.distributed.") for q in source.qualified(c)) for c in calls):
            continue
        made = {code(c) for c in calls if source.qualified(c) & SUMMARY_WRITERS}
        bound = {
            code(t.target)
            for a in source.of_types_in(function, cst.Assign)
            if isinstance(a, cst.Assign) and code(a.value) in made
            for t in a.targets
        }
        returns = [r.value for r in source.of_types_in(function, cst.Return) if isinstance(r, cst.Return) and r.value is not None]
        if returns and all(code(v) in made | bound for v in returns):
            found.add(function)
    return found


def _writes(call: cst.Call) -> bool:
    """``open(path, "w")``, ``open(path, mode="a")``: a literal mode that writes."""
    mode = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "mode"), None)
    if mode is None and len(call.args) > 1 and call.args[1].keyword is None:
        mode = call.args[1].value
    return isinstance(mode, cst.SimpleString) and any(letter in mode.evaluated_value for letter in "wax")


_MKDIRS = frozenset({"os.makedirs", "os.mkdir", "pathlib.Path.mkdir"})
_EXISTS = frozenset({"os.path.exists", "os.path.isfile", "pathlib.Path.exists", "pathlib.Path.is_file"})
_DUMPS = frozenset({"pickle.dump", "json.dump", "torch.save", "numpy.save", "yaml.dump", "yaml.safe_dump", "joblib.dump"})


def path_makers(source: Source, tops: list[cst.FunctionDef]) -> set[str]:
    """The module's top-level functions that create directories in their own body
    (``prepare_dirs(config)``: ``if not os.path.exists(d): os.makedirs(d)``), or write a file
    they first test for (a cache: ``if os.path.exists(p): vocab = pkl.load(...) else: ...;
    pkl.dump(vocab, open(p, "wb"))``): run on every rank at once, the ranks race between the
    test and the creation, and read each other's half-written files."""
    found = set()
    for function in tops:
        calls = [c for c in source.of_types_in(function, cst.Call) if isinstance(c, cst.Call)]
        if any(source.qualified(c) & _MKDIRS or is_method_call(c, "mkdir") for c in calls):
            found.add(function.name.value)
        tests = any(source.qualified(c) & _EXISTS or is_method_call(c, "exists", "is_file") for c in calls)
        if tests and any(source.qualified(c) & _DUMPS or (source.qualified(c) & _OPEN and _writes(c)) for c in calls):
            found.add(function.name.value)
    return found


def cache_writers(source: Source, tops: list[cst.FunctionDef]) -> set[str]:
    """The module's top-level functions that write a file they first test for, by the same
    path (``if os.path.exists(p): ... else: pkl.dump(vocab, open(p, "wb"))``): a cache the
    other ranks read afterwards, unlike a folder tested for and then written into."""
    found = set()
    for function in tops:
        calls = [c for c in source.of_types_in(function, cst.Call) if isinstance(c, cst.Call)]
        tested = {code(c.args[0].value) for c in calls if c.args and source.qualified(c) & _EXISTS}
        tested |= {code(c.func.value) for c in calls if is_method_call(c, "exists", "is_file")}  # type: ignore[attr-defined]
        written = set()
        for call in calls:
            if source.qualified(call) & _OPEN and _writes(call) and call.args:
                written.add(code(call.args[0].value))
            elif source.qualified(call) & _DUMPS and len(call.args) > 1:
                written.add(code(call.args[1].value))
        if tested & written:
            found.add(function.name.value)
    return found


# Calls that start an experiment-tracker run: each process that makes one opens a run of its own.
RUN_STARTS = frozenset({"wandb.init"})


def run_starters(source: Source, context: Context, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that start a tracker run on every rank they run on (``wandb.init``
    with no rank test around it in the function and no ``mode=`` switch), themselves or through
    the module's functions and project helpers they call (``Helper.starts_run``: mace's
    ``setup_wandb`` -> ``tools.init_wandb``; torchdrug's ``WandbLogger`` built)."""

    def starts(call: cst.Call) -> bool:
        if not source.qualified(call) & RUN_STARTS:
            return False
        return not any(a.keyword is not None and a.keyword.value in ("mode", "disabled") for a in call.args)

    def answer(function: cst.FunctionDef, called: Callable[[cst.Call], bool | None]) -> bool | None:
        calls = source.of_types_in(function, cst.Call)  # where a call runs is asked of the few that start one
        return any((starts(c) or called(c)) and not context.local(c).selection.rank_dependent for c in calls) or None

    return set(through_calls(source, functions, answer, lambda helper: helper.starts_run or None))
