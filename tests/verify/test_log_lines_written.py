"""``ddpify verify`` counts a log line only where some handler writes it: the
``NullHandler`` that ``ddpify.rank_zero_logging`` gives the other ranks writes nothing (a
converted script's file logger on rank 1 was reported as "log lines from every rank")."""

from __future__ import annotations

import logging

from ddpify.verify.hooks_io import _reaches_handler


def _record(level: int) -> logging.LogRecord:
    return logging.LogRecord("Model", level, "train.py", 1, "Save model...", None, None)


def test_a_line_counts_only_where_a_handler_writes_it() -> None:
    logger = logging.getLogger("ddpify-test-verify-model")
    logger.propagate = False
    try:
        assert not _reaches_handler(logger, _record(logging.INFO))  # no handler: INFO is below the last resort
        assert _reaches_handler(logger, _record(logging.WARNING))  # the last resort prints warnings
        logger.addHandler(logging.NullHandler())  # rank 1 of rank_zero_logging(logging.FileHandler)
        assert not _reaches_handler(logger, _record(logging.WARNING))  # and no last resort any more
        logger.addHandler(logging.StreamHandler())
        assert _reaches_handler(logger, _record(logging.INFO))
    finally:
        logger.handlers.clear()
        logger.propagate = True


def test_a_parent_handler_writes_what_a_child_propagates() -> None:
    parent = logging.getLogger("ddpify-test-verify")
    child = logging.getLogger("ddpify-test-verify.child")
    parent.propagate = False
    try:
        child.addHandler(logging.NullHandler())
        parent.addHandler(logging.StreamHandler())
        assert _reaches_handler(child, _record(logging.INFO))
        child.propagate = False
        assert not _reaches_handler(child, _record(logging.INFO))
    finally:
        child.handlers.clear()
        parent.handlers.clear()
        child.propagate = parent.propagate = True
