"""docs/rules.md is generated from the rules; a stale copy fails here."""

from pathlib import Path

from ddpify.check.docs import all_rules_doc
from ddpify.check.rules import ALL_RULES


def test_rules_doc_is_fresh() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert path.read_text() == all_rules_doc(), "regenerate: python -m ddpify.check.docs > docs/rules.md"


def test_at_least_twenty_rules() -> None:
    assert len(ALL_RULES) >= 20
