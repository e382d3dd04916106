"""docs/rules.md is generated from the rules; a stale copy fails here."""

from pathlib import Path

from ddpify.check.docs import all_rules_doc
from ddpify.check.rules import ALL_RULES


def test_rules_doc_is_fresh() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert path.read_text() == all_rules_doc(), "regenerate: python -m ddpify.check.docs > docs/rules.md"


def test_at_least_twenty_rules() -> None:
    assert len(ALL_RULES) >= 20


def test_every_opt_in_rule_says_why() -> None:
    for rule in ALL_RULES:
        assert rule.default or rule.opt_in.strip(), f"{rule.code} is opt-in without a reason"
        assert not (rule.default and rule.opt_in), f"{rule.code} is default but says why it is opt-in"
