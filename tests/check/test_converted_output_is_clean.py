"""One engine: whatever ``ddpify SRC -o OUT`` writes passes ``ddpify check`` (every golden
fixture's expected output and every converted example twin).

The only findings allowed are the ones a fixture lists in ``expected_findings.txt``: patterns
the converter documents as not rewritable and reports to a human (e.g. gradient accumulation
whose step test reads a counter the loop increments)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source

ROOT = Path(__file__).resolve().parents[2]
CONVERTED = sorted(ROOT.glob("tests/fixtures/convert/*/expected.py")) + sorted(ROOT.glob("examples/*/train_ddp.py"))


def _allowed(path: Path) -> list[str]:
    listed = path.parent / "expected_findings.txt"
    return sorted(listed.read_text().split()) if listed.exists() else []


@pytest.mark.parametrize("path", CONVERTED, ids=[str(p.relative_to(ROOT)) for p in CONVERTED])
def test_converted_output_has_no_findings(path: Path) -> None:
    result = check_source(path.read_text(), str(path))
    assert result.distributed, "converted output must count as a distributed script"
    findings = sorted(f.code for f in result.findings)
    assert findings == _allowed(path), [f"{f.line}: {f.code} {f.message}" for f in result.findings]
