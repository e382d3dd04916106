"""Sets of half-open source ranges ``[start, end)``: whether a position lies in any of them is
one bisection, however many ranges there are (a file of 1,000 training loops asks it for each)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable


class Spans:
    """Ranges kept merged and sorted, so starts and ends both ascend."""

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self.update(ranges)

    def add(self, start: int, end: int) -> None:
        if start >= end:
            return
        first = bisect.bisect_left(self._ends, start)  # ranges before it end before ``start``
        after = bisect.bisect_right(self._starts, end)  # ranges from it on start after ``end``
        if first < after:  # they overlap or touch the new range: one range replaces them all
            start, end = min(start, self._starts[first]), max(end, self._ends[after - 1])
        self._starts[first:after] = [start]
        self._ends[first:after] = [end]

    def update(self, ranges: Iterable[tuple[int, int]]) -> None:
        for start, end in ranges:
            self.add(start, end)

    def __contains__(self, position: int) -> bool:
        index = bisect.bisect_right(self._starts, position) - 1
        return index >= 0 and position < self._ends[index]
