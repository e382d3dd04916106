"""Errors that end a run with a documented exit code and a one-line message."""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHANGED = 1  # reserved for --check style "would change" answers
EXIT_BAD_INPUT = 2


class DdpifyError(Exception):
    """Bad input or usage: the CLI prints ``ddpify: error: <message>`` and exits 2."""

    exit_code = EXIT_BAD_INPUT
