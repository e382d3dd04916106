"""Golden conversions: every ``tests/fixtures/convert/<case>/input.py`` must convert to its
``expected.py`` byte for byte, and its report (every change and every item for a human, with
their lines, as ``ddpify`` prints them before the launch hints) must equal
``expected_report.txt``. A case without ``expected.py`` is a no-op twin: its input must come out
unchanged. ``options.json`` (optional) holds keyword arguments for convert_source.

Regenerate after an intended change with ``DDPIFY_UPDATE_GOLDENS=1 pytest tests/convert/test_golden.py``
and review the diff like any other code change.
"""

from __future__ import annotations

import io
import json
import os
import tokenize
from pathlib import Path

import libcst as cst
import pytest

from ddpify.api import convert_source
from ddpify.findings import ConversionResult
from ddpify.report import conversion_report

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


def _report(result: ConversionResult) -> str:
    """The report's items: everything before the launch hints (which do not depend on the case)."""
    return conversion_report(result, "input.py", "expected.py").split("launch:\n")[0]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_report(case: Path) -> None:
    result = convert_source(_read(case / "input.py"), **_options(case))
    expected_path = case / "expected_report.txt"
    if UPDATE:
        expected_path.write_text(_report(result), encoding="utf-8")
    assert _report(result) == expected_path.read_text(encoding="utf-8")


def _code_lines(source: str) -> set[int]:
    """Lines holding code: not blank, not only a comment, not inside a string literal's continuation."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            lines.add(token.start[0])
    return lines


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_report_lines_point_at_code(case: Path) -> None:
    """Every line a report names holds code of the input: an item never points at a blank
    line, a comment, or past the end of the file."""
    source = _read(case / "input.py")
    result = convert_source(source, **_options(case))
    code_lines = _code_lines(source)
    for line, text in [(c.line, c.what) for c in result.changes] + [(m.line, m.why) for m in result.manual]:
        assert not line or line in code_lines, f"line {line} holds no code of the input: {text}"


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
