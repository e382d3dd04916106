"""Findings as text, JSON, GitHub Actions annotations or SARIF 2.1.0 (GitHub code scanning)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ddpify import __version__
from ddpify.findings import Finding

_SARIF_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def severity_of(code: str) -> str:
    """A finding's severity, the same in every output format: its rule's (DDP000, which is
    no rule, is a warning)."""
    from ddpify.check.rules import BY_CODE

    rule = BY_CODE.get(code)
    return rule.severity if rule is not None else "warning"


def render(findings: Sequence[Finding], output_format: str) -> str:
    findings = sorted(findings)
    if output_format == "json":
        return json.dumps([_as_dict(f) for f in findings], indent=2) + "\n"
    if output_format == "github":
        return "".join(_github(f) for f in findings)
    if output_format == "sarif":
        return json.dumps(sarif(findings), indent=2) + "\n"
    return "".join(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}{' [*]' if f.fix == 'safe' else ''}\n" for f in findings)


def summary(findings: Sequence[Finding], *, unsafe_fixes: bool, errors: int = 0, checked: int = 0, skipped: int = 0) -> str:
    """The closing lines: how many files were linted and skipped (so a clean run over a folder
    shows it looked at something), then the verdict; never success when a file could not be
    checked (``errors``)."""
    counted = f"{checked} file{'s' if checked != 1 else ''} checked"
    if skipped:
        counted += f", {skipped} skipped (not distributed scripts; --require-ddp reports them)"
    counted += ".\n"
    failed = f"{errors} file{'s' if errors != 1 else ''} could not be checked (errors on stderr).\n" if errors else ""
    if not findings:
        return counted + (failed or "All checks passed.\n")
    safe = sum(1 for f in findings if f.fix == "safe")
    unsafe = sum(1 for f in findings if f.fix == "unsafe")
    text = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}."
    fixable = safe + (unsafe if unsafe_fixes else 0)
    if fixable:
        text += f"\n[*] {fixable} fixable with `ddpify check --fix{' --unsafe-fixes' if unsafe_fixes and unsafe else ''}`."
    if unsafe and not unsafe_fixes:
        text += f"\n{unsafe} more fixable with --unsafe-fixes."
    return counted + text + "\n" + failed


def statistics(findings: Sequence[Finding]) -> str:
    from ddpify.check.rules import BY_CODE

    counts = Counter(f.code for f in findings)
    lines = [
        f"{count:5d}  {code}  {BY_CODE[code].name if code in BY_CODE else 'not-distributed'}"
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def _as_dict(finding: Finding) -> dict:
    return {
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "code": finding.code,
        "severity": severity_of(finding.code),
        "message": finding.message,
        "fix": finding.fix,
    }


def _github(finding: Finding) -> str:
    message = finding.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    command = _GITHUB_COMMAND[severity_of(finding.code)]
    return f"::{command} title={finding.code},file={finding.path},line={finding.line},col={finding.column}::{finding.code} {message}\n"


def sarif(findings: Sequence[Finding]) -> dict:
    from ddpify.check.rules import ALL_RULES

    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.message},
            "fullDescription": {"text": rule.why},
            "help": {"text": rule.why},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "properties": {"fix": rule.fix or "none", "default": rule.default},
        }
        for rule in ALL_RULES
    ]
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[severity_of(f.code)],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path.replace("\\", "/")},
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.column,
                            **({"endLine": f.end_line, "endColumn": f.end_column} if f.end_line else {}),
                        },
                    }
                }
            ],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "ddpify", "version": __version__, "rules": rules}}, "results": results}],
    }
