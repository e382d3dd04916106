"""The DDP checklist, caught by default (issue 21): each script under ``data/single_bug/`` is a
small DDP training script with one seeded mistake, named by its ``# bug: DDPnnn`` header;
``ddpify check`` with its default rules must report exactly that rule on it, and nothing on
``clean.py`` (``# bug: none``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

SCRIPTS = sorted((Path(__file__).parent / "data" / "single_bug").glob("*.py"))
BUG = re.compile(r"^# bug: (DDP\d{3}|none)$", re.M)


def test_eighteen_bugs_and_a_clean_script() -> None:
    bugs = [BUG.search(p.read_text(encoding="utf-8")) for p in SCRIPTS]
    assert all(bugs)
    assert sorted(m.group(1) for m in bugs if m).count("none") == 1 and len(SCRIPTS) == 19


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_default_rules_catch_the_seeded_bug(script: Path) -> None:
    source = script.read_text(encoding="utf-8")
    match = BUG.search(source)
    assert match is not None
    wanted = set() if match.group(1) == "none" else {match.group(1)}
    found = {f.code for f in check_source(source, str(script), rules=select_rules()).findings}
    assert found == wanted
