"""Which rules run (default vs opt-in, --select, --extend-select, --ignore, the configuration),
and one severity per rule in every output format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddpify.check import output
from ddpify.check.config import find_config
from ddpify.check.engine import check_source, select_rules
from ddpify.check.rules import ALL_RULES
from ddpify.errors import DdpifyError
from ddpify.findings import Finding


def _codes(rules) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.code for r in rules]


def test_default_selection_is_the_default_rules() -> None:
    assert _codes(select_rules()) == [r.code for r in ALL_RULES if r.default]
    assert select_rules() and len(select_rules()) < len(ALL_RULES)


def test_select_prefix_extend_select_and_ignore() -> None:
    assert _codes(select_rules(["DDP"])) == _codes(ALL_RULES)
    assert _codes(select_rules(["DDP004"])) == ["DDP004"]
    extended = _codes(select_rules(None, None, ["DDP012"]))
    assert "DDP012" in extended and set(_codes(select_rules())) <= set(extended)
    assert "DDP001" not in _codes(select_rules(None, ["DDP001"]))
    assert _codes(select_rules(["DDP004"], ["DDP004"], ["DDP004"])) == []  # ignore wins


def test_configuration_takes_extend_select(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ddpify]\nextend-select = ["ddp012", "DDP03"]\n')
    assert find_config(tmp_path / "train.py").extend_select == ("DDP012", "DDP03")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.ddpify]\nextend-select = ["DDP999"]\n')
    with pytest.raises(DdpifyError, match="unknown rule DDP999 in \\[tool.ddpify\\] extend-select"):
        find_config(tmp_path / "sub" / "train.py")


UNSAFE_HERE = """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt")
model.load_state_dict(torch.load("model.pt"))
"""


def test_a_finding_can_be_less_safe_than_its_rule() -> None:
    """DDP004's fix is safe straight into load_state_dict, unsafe where the state is used directly."""
    rules = select_rules(["DDP004"])
    findings = check_source(UNSAFE_HERE, rules=rules).findings
    assert [(f.line, f.fix) for f in findings] == [(4, "unsafe"), (5, "safe")]
    safe_only = check_source(UNSAFE_HERE, rules=rules, fix=True)
    assert safe_only.fixed is not None and 'torch.load("ckpt.pt")\n' in safe_only.fixed
    assert 'torch.load("model.pt", map_location="cpu")' in safe_only.fixed
    both = check_source(UNSAFE_HERE, rules=rules, fix=True, unsafe_fixes=True)
    assert both.fixed is not None and both.fixed.count('map_location="cpu"') == 2 and not both.findings


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_one_severity_in_every_output(rule) -> None:  # type: ignore[no-untyped-def]
    finding = Finding("train.py", 3, 1, rule.code, rule.message)
    as_json = json.loads(output.render([finding], "json"))[0]
    github = output.render([finding], "github")
    sarif = output.sarif([finding])
    assert as_json["severity"] == rule.severity
    assert github.startswith({"error": "::error ", "warning": "::warning ", "note": "::notice "}[rule.severity])
    assert sarif["runs"][0]["results"][0]["level"] == rule.severity
    described = next(r for r in sarif["runs"][0]["tool"]["driver"]["rules"] if r["id"] == rule.code)
    assert described["defaultConfiguration"]["level"] == rule.severity
    assert described["properties"]["default"] is rule.default


def test_all_is_every_rule_on_the_command_line_and_in_the_configuration(tmp_path: Path) -> None:
    """ruff's ``ALL`` works as it does there (any case), here as the prefix DDP."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text('[tool.ddpify]\nselect = ["all"]\n')
    assert find_config(tmp_path / "train.py").select == ("DDP",)
    (tmp_path / "train.py").write_text("import torch.distributed as dist\nprint('hello')\n")
    listed = subprocess.run(
        [sys.executable, "-m", "ddpify", "check", "--no-cache", "--select", "ALL", "train.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert listed.returncode == 1 and "DDP012" in listed.stdout, listed.stdout + listed.stderr  # an opt-in rule ran
