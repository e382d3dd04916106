"""Every rule's own VALID/INVALID examples, run as tests: valid code gives no finding of the
rule, invalid code gives at least one, and ``--fix`` turns it into the documented result,
which then has no finding of the rule left."""

from __future__ import annotations

import re

import libcst as cst
import pytest

from ddpify.check.engine import check_source
from ddpify.check.rules import ALL_RULES

VALID = [(rule, i) for rule in ALL_RULES for i in range(len(rule.valid))]
INVALID = [(rule, i) for rule in ALL_RULES for i in range(len(rule.invalid))]


def _codes(source: str, rule) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in check_source(source, rules=[rule]).findings]


@pytest.mark.parametrize("rule, index", VALID, ids=[f"{r.code}-valid{i}" for r, i in VALID])
def test_valid_example_has_no_finding(rule, index) -> None:  # type: ignore[no-untyped-def]
    assert rule.code not in _codes(rule.valid[index], rule)


@pytest.mark.parametrize("rule, index", INVALID, ids=[f"{r.code}-invalid{i}" for r, i in INVALID])
def test_invalid_example_is_flagged_and_fixed(rule, index) -> None:  # type: ignore[no-untyped-def]
    example = rule.invalid[index]
    assert rule.code in _codes(example.code, rule)
    result = check_source(example.code, rules=[rule], fix=True, unsafe_fixes=True)
    if example.fixed is None:
        assert result.fixed is None, "this example documents no fix, yet one was applied"
        return
    assert result.fixed == example.fixed
    cst.parse_module(result.fixed)
    assert rule.code not in [f.code for f in result.findings]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_documented(rule) -> None:  # type: ignore[no-untyped-def]
    assert re.fullmatch(r"DDP\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9-]+", rule.name)
    assert rule.message and len(rule.why) > 80
    assert rule.valid and rule.invalid
    if rule.fix:
        assert any(i.fixed is not None for i in rule.invalid), "a fixing rule shows its fix"


def test_codes_and_names_are_unique() -> None:
    assert len({r.code for r in ALL_RULES}) == len(ALL_RULES)
    assert len({r.name for r in ALL_RULES}) == len(ALL_RULES)
