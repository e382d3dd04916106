"""Spans: membership in merged half-open ranges, against a plain scan of the same ranges."""

from __future__ import annotations

import random

from ddpify.tree.spans import Spans


def test_membership_matches_a_scan_of_the_ranges() -> None:
    draw = random.Random(7)
    for _ in range(200):
        ranges = [(a, a + draw.randrange(0, 6)) for a in (draw.randrange(0, 40) for _ in range(draw.randrange(0, 8)))]
        spans = Spans(ranges[: len(ranges) // 2])
        spans.update(ranges[len(ranges) // 2 :])
        for position in range(-1, 48):
            assert (position in spans) == any(a <= position < b for a, b in ranges), (ranges, position)


def test_ranges_are_half_open_and_touching_ones_merge() -> None:
    spans = Spans([(2, 4), (4, 6)])
    assert 1 not in spans and 2 in spans and 4 in spans and 5 in spans and 6 not in spans
    spans.add(8, 8)  # empty: holds nothing
    assert 8 not in spans
    spans.add(0, 10)
    assert all(p in spans for p in range(10)) and 10 not in spans
