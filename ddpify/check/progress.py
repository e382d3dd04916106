"""A progress bar on stderr for long ``ddpify check`` runs, drawn only on a terminal.

Piped or redirected output (CI logs, pre-commit, ``2> file``) never sees it. On a terminal it
appears only for runs of many files that take a while, redraws at most ten times a second,
and erases itself when the run ends, so the findings print on a clean line.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

MIN_FILES = 20  # fewer files finish too soon for a bar to help
DELAY_S = 0.3  # nor is one drawn before the run has taken this long
REDRAW_S = 0.1
WIDTH = 30


class ProgressBar:
    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = _is_terminal(self.stream)
        self.enabled = enabled
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < MIN_FILES:
            return
        now = time.monotonic()
        if now - self.started < DELAY_S or (now - self.last_draw < REDRAW_S and done < total):
            return
        self.last_draw = now
        filled = WIDTH * done // total
        bar = "#" * filled + "-" * (WIDTH - filled)
        self.stream.write(f"\r\x1b[Kddpify check [{bar}] {done}/{total} files {now - self.started:.1f}s")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
