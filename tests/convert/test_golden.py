"""Golden conversions: every ``tests/fixtures/convert/<case>/input.py`` must convert to its
``expected.py`` byte for byte. A case without ``expected.py`` is a no-op twin: its input must
come out unchanged. ``options.json`` (optional) holds keyword arguments for convert_source.

Regenerate after an intended change with ``DDPIFY_UPDATE_GOLDENS=1 pytest tests/convert/test_golden.py``
and review the diff like any other code change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import libcst as cst
import pytest

from ddpify.api import convert_source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "convert"
CASES = sorted(p for p in FIXTURES.iterdir() if (p / "input.py").exists())
UPDATE = os.environ.get("DDPIFY_UPDATE_GOLDENS") == "1"


def _read(path: Path) -> str:
    """Text exactly as stored: CRLF line endings must survive, so no newline translation."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def _options(case: Path) -> dict:
    options = case / "options.json"
    return json.loads(options.read_text()) if options.exists() else {}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Path) -> None:
    source = _read(case / "input.py")
    result = convert_source(source, **_options(case))
    expected_path = case / "expected.py"
    if UPDATE and (expected_path.exists() or result.output != source):
        expected_path.write_bytes(result.output.encode())
    if expected_path.exists():
        assert result.output == _read(expected_path)
        assert result.changes, "a rewrite case must report what it changed"
    else:
        assert result.output == source, "no-op twin must come out byte-identical"
        assert not result.changes


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_converting_twice_changes_nothing(case: Path) -> None:
    once = convert_source(_read(case / "input.py"), **_options(case)).output
    twice = convert_source(once, **_options(case))
    assert twice.output == once
    cst.parse_module(once)  # output always parses


def test_fixture_set_covers_rewrites_and_twins() -> None:
    rewrites = [c for c in CASES if (c / "expected.py").exists()]
    twins = [c for c in CASES if not (c / "expected.py").exists()]
    assert len(rewrites) >= 15 and len(twins) >= 5
