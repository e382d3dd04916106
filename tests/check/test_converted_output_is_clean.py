"""One engine: whatever ``ddpify SRC -o OUT`` writes passes ``ddpify check`` with no finding
(every golden fixture's expected output and every converted example twin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source

ROOT = Path(__file__).resolve().parents[2]
CONVERTED = sorted(ROOT.glob("tests/fixtures/convert/*/expected.py")) + sorted(ROOT.glob("examples/*/train_ddp.py"))


@pytest.mark.parametrize("path", CONVERTED, ids=[str(p.relative_to(ROOT)) for p in CONVERTED])
def test_converted_output_has_no_findings(path: Path) -> None:
    result = check_source(path.read_text(), str(path))
    assert result.distributed, "converted output must count as a distributed script"
    assert [f"{f.line}: {f.code} {f.message}" for f in result.findings] == []
