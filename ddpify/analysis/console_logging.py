"""Where the root logger prints: the logging setups that give it a console handler on every
rank, at which level, and the rank tests that quiet it. ``logger.info(...)`` on a standard
logger prints on every rank when the process's setup lets it through, wherever that setup is:
in the file (``logging.basicConfig(level=logging.INFO)``), in a project helper it calls
(BERT-NER's ``init_logger``), or, for a module with no setup of its own, in the project files
that import it (CvT's ``tools/train.py``). A rank test anywhere in that setup (``setLevel(INFO
if rank == 0 else ERROR)``, a filter on the rank, a helper muting the loggers it is handed on
the other ranks) makes the answer "quiet"."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.loggers import console_handler, quieted_by_rank
from ddpify.analysis.module_facts import through_calls
from ddpify.tree.cstutil import callee_name, code, is_method_call, is_simple_reference

if TYPE_CHECKING:
    from ddpify.analysis.context import Context
    from ddpify.analysis.source import Source

# Levels a logging setup is given by name or number, at or below WARNING.
_LEVELS = {"NOTSET": 0, "DEBUG": 10, "INFO": 20, "WARN": 30, "WARNING": 30, "0": 0, "10": 10, "20": 20, "30": 30}
_STREAMS = frozenset({"sys.stdout", "sys.stderr"})
# Levels of ``logger.<method>(...)`` calls that print when the console's level lets them through.
METHOD_LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30}
_IMPORTERS = 8  # at most this many importing files are read for their logging setup
_ROOT_METHODS = frozenset({"setLevel", "addHandler"})


@dataclasses.dataclass(frozen=True)
class Console:
    """A file's logging setup: ``level``, the lowest level (WARNING or lower) at which the root
    logger prints to a console on every rank (None: no such setup); ``quiet``, a rank test
    quiets some of it (then nothing is known to print on every rank)."""

    level: int | None = None
    quiet: bool = False


def root_console_level(
    source: Source, context: Context, function: cst.FunctionDef | None, called: Callable[[cst.Call], int | None]
) -> int | None:
    """The level (WARNING or lower) at which the root logger prints to a console on every rank
    once ``function`` ran (None: anywhere in the module): ``logging.basicConfig(level=INFO)``
    with no log file (or ``stream=sys.stdout``, ``handlers=[StreamHandler(...)]``); a root
    logger (``logging.getLogger()``) given a level and a console handler (``addHandler``,
    ``handlers = [console]``), the handler's own level if it has one; or a call ``called``
    answers for (a project helper that does). None where none does, or the rank decides."""
    calls = _calls(source, function)
    if _quiets(source, context, calls, function):
        return None
    depends = context.rank_tests.depends_on_rank
    level: int | None = None
    consoles: list[int] = []
    configured: list[int] = []
    for call in calls:
        name = callee_name(call)
        basic = name == "basicConfig" and "logging.basicConfig" in source.qualified(call)
        root = name in _ROOT_METHODS and isinstance(call.func, cst.Attribute) and _is_root(source, call.func.value)
        helper = None if basic or root else called(call)
        if not (basic or root or helper is not None) or not context.every_rank(call):
            continue
        if helper is not None:
            configured.append(helper)
        elif basic:
            given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "level"), None)
            if given is not None and not depends(given):
                level = _level(given)
            if _basic_console(source, call):
                consoles.append(0)
        elif is_method_call(call, "setLevel") and call.args and not depends(call.args[0].value):
            level = _level(call.args[0].value)
        elif is_method_call(call, "addHandler") and call.args and console_handler(source, call.args[0].value):
            consoles.append(_handler_level(source, calls, call.args[0].value))
    for statement in source.of_types(cst.Assign) if function is None else source.of_types_in(function, cst.Assign):
        assert isinstance(statement, cst.Assign)
        handlers = [t.target for t in statement.targets if isinstance(t.target, cst.Attribute) and t.target.attr.value == "handlers"]
        if handlers and _is_root(source, handlers[0].value) and context.every_rank(statement) and isinstance(statement.value, cst.List):
            consoles += [_handler_level(source, calls, e.value) for e in statement.value.elements if console_handler(source, e.value)]
    if level is not None:
        configured += [max(level, handler) for handler in consoles if max(level, handler) <= 30]
    return min(configured, default=None)


def _calls(source: Source, function: cst.FunctionDef | None) -> list[cst.Call]:
    if function is None:
        return [c for c in source.of_types(cst.Call) if isinstance(c, cst.Call)]
    return [c for c in source.of_types_in(function, cst.Call) if isinstance(c, cst.Call) and source.enclosing_function(c) is function]


def _quiets(source: Source, context: Context, calls: list[cst.Call], function: cst.FunctionDef | None) -> bool:
    """A rank test quiets the loggers here: a rank's level or switch (``quieted_by_rank``, not
    counting another library's named logger), a ``basicConfig`` level the rank picks, or a filter
    on the rank (``logger.addFilter(lambda _: rank == 0)``: mace's ``setup_logger``)."""
    levels = [c for c in calls if callee_name(c) == "setLevel" and not _library_logger_call(source, c)]
    if quieted_by_rank(source, context, levels, function):
        return True
    for call in calls:
        if callee_name(call) == "basicConfig" and "logging.basicConfig" in source.qualified(call):
            level = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "level"), None)
            if level is not None and context.rank_tests.depends_on_rank(level):
                return True  # `level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN`
        if callee_name(call) == "addFilter" and call.args:
            given = call.args[0].value
            if context.rank_tests.depends_on_rank(given.body if isinstance(given, cst.Lambda) else given):
                return True
    return False


def _level(value: cst.BaseExpression) -> int | None:
    return _LEVELS.get(code(value).rsplit(".", 1)[-1].strip("'\""))


def _handler_level(source: Source, calls: list[cst.Call], handler: cst.BaseExpression) -> int:
    """A console handler's own level (``ch.setLevel(logging.WARNING)``): 0 where it sets none,
    above WARNING (prints nothing this module counts) where it is not read off."""
    name = code(handler)
    levels = [c.args[0].value for c in calls if is_method_call(c, "setLevel") and c.args and code(c.func.value) == name]  # type: ignore[attr-defined]
    if not levels:
        return 0
    found = _level(levels[-1])
    return found if found is not None else 50


def _basic_console(source: Source, call: cst.Call) -> bool:
    """``logging.basicConfig(...)`` attaches a console handler: no ``filename=`` and no other
    handlers, or a standard stream, or a console among its ``handlers=``."""
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if "handlers" in given:
        listed = given["handlers"]
        return isinstance(listed, (cst.List, cst.Tuple)) and any(console_handler(source, e.value) for e in listed.elements)
    if "stream" in given:
        return code(given["stream"]) in _STREAMS
    return "filename" not in given


def _library_logger_call(source: Source, call: cst.Call) -> bool:
    """A call on another library's logger (``logging.getLogger("transformers").setLevel(WARN)``)."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not isinstance(receiver, cst.Call) or "logging.getLogger" not in source.qualified(receiver) or not receiver.args:
        return False
    return isinstance(receiver.args[0].value, cst.SimpleString) and not _is_root(source, receiver)


def _is_root(source: Source, value: cst.BaseExpression) -> bool:
    """The root logger: ``logging.root``, ``logging.getLogger()`` (or of ``""``/``None``/``"root"``),
    or a name bound only to one of these."""
    if isinstance(value, cst.Name):
        bound = [v for _, v in source.assignments.get(value.value, [])]
        return bool(bound) and all(v is not None and not isinstance(v, cst.Name) and _is_root(source, v) for v in bound)
    if isinstance(value, cst.Attribute):
        return "logging.root" in source.qualified(value)
    if not isinstance(value, cst.Call) or "logging.getLogger" not in source.qualified(value):
        return False
    if not value.args:
        return True
    first = value.args[0].value
    return code(first) == "None" or (isinstance(first, cst.SimpleString) and first.evaluated_value in ("", "root"))


def logging_facts(
    source: Source, context: Context, functions: list[cst.FunctionDef]
) -> tuple[dict[cst.FunctionDef, int], set[cst.FunctionDef], list[str]]:
    """What a project module's summary says of its logging: ``module_console_levels``,
    ``quieting_functions`` of ``functions``, and its ``logging_loggers``."""
    return module_console_levels(source, context, functions), quieting_functions(source, context, functions), logging_loggers(source)


def module_console_levels(source: Source, context: Context, functions: list[cst.FunctionDef]) -> dict[cst.FunctionDef, int]:
    """``root_console_level`` of each of a module's ``functions``, following calls to the
    module's own functions and to the project helpers it imports (``Helper.console_level``)."""
    return through_calls(
        source,
        functions,
        lambda function, called: root_console_level(source, context, function, called),
        lambda helper: helper.console_level,
    )


def quieting_functions(source: Source, context: Context, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that quiet loggers on some ranks (seamless's ``init_distributed(
    loggers)``: ``setLevel(ERROR)`` on each one handed in, off the main process), themselves or
    through the module's functions and project helpers they call (``Helper.quiets_logging``)."""

    def answer(function: cst.FunctionDef, called: Callable[[cst.Call], bool | None]) -> bool | None:
        calls = _calls(source, function)
        return _quiets(source, context, calls, function) or any(called(c) for c in calls) or None

    return set(through_calls(source, functions, answer, lambda helper: helper.quiets_logging or None))


def logging_loggers(source: Source) -> list[str]:
    """The names the module's top level binds once, to a ``logging.getLogger(...)`` logger."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    for statement in source.module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else []:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                bound.setdefault(small.targets[0].target.value, []).append(small.value)
    return [
        name
        for name, values in bound.items()
        if len(values) == 1 and isinstance(values[0], cst.Call) and "logging.getLogger" in source.qualified(values[0])
    ]


def file_console(source: Source, context: Context) -> Console:
    """The logging setup of a whole file, through the project helpers it calls."""
    calls = _calls(source, None)
    helpers = {c: source.project.helper(c) for c in calls}
    if _quiets(source, context, calls, None) or any(h is not None and h.quiets_logging for h in helpers.values()):
        return Console(quiet=True)

    def called(call: cst.Call) -> int | None:
        helper = helpers.get(call)
        return helper.console_level if helper is not None else None

    return Console(root_console_level(source, context, None, called))


# Reads a project file with its imports: its source and context (None where it cannot be read).
Read = Callable[[Path], "tuple[Source, Context] | None"]


def importers_console(source: Source, read: Read) -> Console:
    """The logging setup of the project files that import this one directly (at most
    ``_IMPORTERS``, each ``read``): the lowest level any gives every rank, quiet when any
    quiets. The entry script sets up logging for the library modules it runs."""
    levels = []
    for file in source.project.importers[:_IMPORTERS]:
        analysis = read(file)
        if analysis is None:
            continue
        found = file_console(*analysis)
        if found.quiet:
            return found
        if found.level is not None:
            levels.append(found.level)
    return Console(min(levels, default=None))


def console_setup(source: Source, context: Context, read: Read) -> tuple[int | None, str]:
    """The root logger's console level on every rank for this file and what sets it up: the
    file's own setup, or for a file with none the setup of the files that import it (each
    ``read``); no level where a rank test quiets either."""
    here, elsewhere = file_console(source, context), importers_console(source, read)
    if here.quiet or elsewhere.quiet:
        return None, ""
    if here.level is not None:
        return here.level, "the logging setup (root logger at that level)"
    return elsewhere.level, "the logging setup of the files that import this one"


def standard_logger(source: Source, call: cst.Call) -> bool:
    """``call`` logs through ``logging`` itself (``logging.info``) or a logger that this file or
    a project module binds to ``logging.getLogger(...)``: one the root logger's setup prints."""
    if not isinstance(call.func, cst.Attribute):
        return False
    if any(q.startswith("logging.") and q.count(".") == 1 for q in source.qualified(call)):
        return True
    receiver = call.func.value
    if not is_simple_reference(receiver):
        return False
    made = [v for _, v in source.assignments.get(code(receiver), [])]
    if made:
        return all(isinstance(v, cst.Call) and "logging.getLogger" in source.qualified(v) for v in made)
    helper = source.project.named(code(receiver))
    return helper is not None and helper.logging_logger
