"""The lines of a converted copy mapped back to the user's script: ``ddpify verify`` on a
single-GPU script runs a temporary converted copy, and its evidence must name the lines the
user wrote, not the copy's. No torch: this runs in the ``ddpify verify`` process."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

__all__ = ["LineMap"]


@dataclass(frozen=True)
class LineMap:
    """Converted line -> the user's line it came from (same or rewritten), or, for a line the
    conversion added, the negated user line it follows (``-14``: added after line 14; ``0``:
    added before line 1)."""

    name: str  # the script's file name, as the records' sites spell it (``train.py:40``)
    origin: dict[int, int] = field(default_factory=dict)

    @classmethod
    def between(cls, name: str, original: str, converted: str) -> LineMap:
        """Unchanged lines match themselves; a rewritten block's lines match the block's lines
        in order (its last one when the rewrite is longer)."""
        matcher = difflib.SequenceMatcher(None, original.splitlines(), converted.splitlines(), autojunk=False)
        origin: dict[int, int] = {}
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            for j in range(j1, j2):
                if tag == "insert":
                    origin[j + 1] = -i1
                elif tag != "delete":
                    origin[j + 1] = i1 + min(j - j1, i2 - i1 - 1) + 1
        return cls(name, origin)

    def label(self, line: int) -> str:
        """How the evidence names converted ``line``: ``train.py:12``, or the user line an
        added one follows."""
        user = self.origin.get(line)
        if user is None:
            return f"{self.name}:{line} (of the converted copy)"
        if user > 0:
            return f"{self.name}:{user}"
        return f"a line ddpify added after {self.name}:{-user}" if user else f"a line ddpify added before {self.name}:1"

    def relabel(self, text: str) -> str:
        """``text`` with every ``NAME:LINE`` of the converted copy replaced by the user's line."""
        pattern = re.compile(rf"(?<![\w.]){re.escape(self.name)}:(\d+)")
        return pattern.sub(lambda match: self.label(int(match.group(1))), text)
