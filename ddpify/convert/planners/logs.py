"""The ``logging`` module on every rank: ``logging.basicConfig(filename=...)`` and
``logging.FileHandler(path)`` make N processes truncate and append to one log file, and a
``StreamHandler`` or basicConfig's console shows every INFO line N times.

The configuration (``basicConfig``, ``dictConfig``, ``fileConfig``) and each handler the
script builds become ``ddpify.rank_zero_logging(<the same callable>)(<the same arguments>)``:
rank 0 runs them as written; the other ranks get a ``NullHandler`` in place of each handler,
and their root logger shows WARNING and above on stderr only (the policy of Hugging Face's
Trainer for replicas). So ``logging.info``, ``logger.info`` and ``logger.warning`` calls stay as
they are, wherever they are: one process writes the log, every rank's warnings still show.
One rewrite per configuring call, rather than a guard on every ``logger.*`` call (they are
many, spread over modules this file imports, and a guard would hide other ranks' warnings).
"""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.loggers import WHOLE
from ddpify.convert import names, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.calls import runs_companion_code
from ddpify.convert.planners.rank_zero import already_guarded, replaces_a_stream
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, is_simple_reference


def plan(recording: Recording, facts: Facts) -> None:
    """``ddpify.rank_zero_logging(...)`` for each logging configuration and handler outside a rank test."""
    for call in recording.write_calls:
        qualified = recording.qualified(call)
        if not qualified & (names.LOG_CONFIG | names.LOG_HANDLERS) or already_guarded(recording, call):
            continue
        what = code(call.func)
        if qualified & names.LOG_CONFIG:
            why = f"{what}(...) configures logging on rank 0 only: the other ranks show warnings and errors on stderr"
        else:
            why = f"{what}(...) writes on rank 0 only: the other ranks get a logging.NullHandler (their warnings still reach stderr)"
        facts.node_rewrites[call] = NodeRewrite(rewrites_io.rank_zero_logging, f"{why} (ddpify.rank_zero_logging({what}))")


def plan_file_writer_classes(recording: Recording, facts: Facts) -> None:
    """``csv_logger = CSVLogger(args=args, filename=path)`` with ``CSVLogger`` a class of the
    project's modules that writes files and does nothing else the ranks share
    (``Helper.writes_files``): built on rank 0 only, ``ddpify.rank_zero(CSVLogger)(...)``, the
    other ranks get a no-op object (``rank_zero_values`` reports a value read off it)."""
    project = recording.analysis.source.project
    for call in recording.analysis.source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        if not is_simple_reference(call.func) or not _held_or_dropped(recording, call):
            continue
        helper = project.named(f"{code(call.func)}.__init__")
        if (
            helper is not None
            and helper.writes_files
            and not already_guarded(recording, call)
            and not runs_companion_code(recording, facts, call)
            and not replaces_a_stream(recording, facts, call)
        ):
            facts.rank_zero_clients.add(call)


def plan_logger_helpers(recording: Recording, facts: Facts) -> None:
    """``logger = make_logger("project", out_dir, "log")``, a function of the project's modules
    that returns a logger with a console (and often a file) handler on every rank
    (``Helper.console_logger``, the whole result), or a TensorBoard event writer
    (``Helper.returns_writer``: ``writer = make_writer(log_dir)``): built on rank 0 only,
    ``ddpify.rank_zero(make_logger)(...)``; the other ranks' ``logger.info(...)`` do nothing
    (``rank_zero_values`` reports a value read off the no-op object)."""
    source = recording.analysis.source
    for call in source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        if not is_simple_reference(call.func) or call in facts.rank_zero_clients:
            continue
        parent = recording.parent(call)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and is_simple_reference(parent.targets[0].target)):
            continue
        helper = source.project.helper(call)
        if helper is not None and (helper.console_logger == WHOLE or helper.returns_writer) and not already_guarded(recording, call):
            facts.rank_zero_clients.add(call)


def _held_or_dropped(recording: Recording, call: cst.Call) -> bool:
    """Built as a statement, or into a plain name or attribute (``log = CSVLogger(...)``): the
    places ``rank_zero_values`` follows to check that no rank reads a value off the no-op
    object, also through a method called on it (CIFAR-ZOO's ``logger = Logger(...).get_log()``:
    the no-op object's methods return one). In a container, an argument or an expression, it
    stays on every rank."""
    parent = recording.parent(call)
    while isinstance(parent, cst.Attribute) and isinstance(outer := recording.parent(parent), cst.Call) and outer.func is parent:
        parent = recording.parent(outer)
    if isinstance(parent, cst.Expr):
        return True
    return isinstance(parent, cst.Assign) and len(parent.targets) == 1 and is_simple_reference(parent.targets[0].target)
