"""Precision from context (issue 21): each folder under ``data/context_idioms/`` is a small
project whose ``train.py`` is correct DDP code of one class the rules used to report wrongly
(a seed in the ``mp.spawn`` parent, a single-node design, prints silenced or rank tests made by
a sibling module, a launcher in a sibling, exclusive rank branches, a project checkpoint loader
that strips ``module.``). ``# must-not-report: CODES`` names the rules that must stay silent
with every rule selected (``CODE:LINE``: not at that line, where another line's finding of the same
rule is true); ``# must-report: CODES`` the true findings the default rules make."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

CASES = sorted((Path(__file__).parent / "data" / "context_idioms").glob("*/train.py"))


def _codes(source: str, header: str) -> set[str]:
    match = re.search(rf"^# {header}: (.*)$", source, re.M)
    return {c.strip() for c in match.group(1).split(",")} if match else set()


@pytest.mark.parametrize("script", CASES, ids=lambda p: p.parent.name)
def test_context_idiom(script: Path) -> None:
    source = script.read_text(encoding="utf-8")
    silent, wanted = _codes(source, "must-not-report"), _codes(source, "must-report")
    assert silent
    every = check_source(source, str(script), rules=select_rules(["DDP"])).findings
    assert not {f.code for f in every} & silent
    assert not {f"{f.code}:{f.line}" for f in every} & silent
    default = {f.code for f in check_source(source, str(script), rules=select_rules()).findings}
    assert default == wanted


@pytest.mark.parametrize("case", ["print_silenced_by_sibling_helper", "rank_helper_in_sibling_package", "launch_helper_in_sibling"])
def test_sibling_facts_are_what_silences(case: str) -> None:
    """Without the project's files (the source checked as a string) the same code is reported:
    the facts come from the sibling modules, not from names."""
    script = Path(__file__).parent / "data" / "context_idioms" / case / "train.py"
    source = script.read_text(encoding="utf-8")
    found = {f.code for f in check_source(source, "<string>", rules=select_rules()).findings}
    assert found & _codes(source, "must-not-report")
