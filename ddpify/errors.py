"""Errors that end a run with a documented exit code and a one-line message."""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHANGED = 1  # reserved for --check style "would change" answers
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3  # a ddpify bug: the rewrite produced code that does not parse; nothing written


class DdpifyError(Exception):
    """Bad input or usage: the CLI prints ``ddpify: error: <message>`` and exits 2."""

    exit_code = EXIT_BAD_INPUT


class InternalError(DdpifyError):
    """The converter produced invalid code. Never written anywhere; please report it."""

    exit_code = EXIT_INTERNAL
