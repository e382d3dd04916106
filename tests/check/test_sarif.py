"""SARIF output validates against the official SARIF 2.1.0 JSON schema, so GitHub code
scanning accepts it. The schema ships in the npm package @microsoft/jest-sarif (no other
registry we can reach carries it); it is fetched once into .cache/ with `npm pack`."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import jsonschema
import pytest

from ddpify.check.engine import check_source
from ddpify.check.output import render

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "sarif"
PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"


@pytest.fixture(scope="session")
def sarif_schema() -> dict:
    schema = CACHE / "sarif-2.1.0-rtm.5.json"
    if not schema.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        assert npm, "npm is needed once to fetch the SARIF schema"
        packed = subprocess.run([npm, "pack", PACKAGE, "--silent"], cwd=CACHE, capture_output=True, text=True, timeout=120)
        assert packed.returncode == 0, packed.stderr
        tarball = CACHE / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            data = archive.extractfile(MEMBER).read()  # type: ignore[union-attr]
        schema.write_bytes(data)
        tarball.unlink()
    return json.loads(schema.read_text())


def test_sarif_output_validates_against_the_2_1_0_schema(sarif_schema: dict) -> None:
    source = "import torch\nimport torch.distributed as dist\nstate = torch.load('x.pt')\ntorch.save(state, 'y.pt')\n"
    findings = check_source(source, "src/train.py").findings
    assert findings
    document = json.loads(render(findings, "sarif"))
    jsonschema.validate(document, sarif_schema)
    run = document["runs"][0]
    assert run["results"][0]["ruleId"] == findings[0].code
    assert run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == findings[0].line
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert all(rule_ids[r["ruleIndex"]] == r["ruleId"] for r in run["results"])


def test_empty_sarif_validates(sarif_schema: dict) -> None:
    jsonschema.validate(json.loads(render([], "sarif")), sarif_schema)


def test_schema_really_rejects_a_broken_log(sarif_schema: dict) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": "2.1.0", "runs": [{"results": []}]}, sarif_schema)
