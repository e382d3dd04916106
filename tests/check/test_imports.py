"""The check path does not import ``libcst.matchers``: it defines hundreds of dataclasses and
costs ~0.25 s of a cold ``ddpify check FILE``. Each test runs in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# The modules of the check path that must not import libcst.matchers themselves.
CHECK_MODULES = (
    "ddpify.tree.cstutil",
    "ddpify.check.scope",
    "ddpify.check.rule",
    "ddpify.check.calls",
    "ddpify.check.places",
    "ddpify.check.script",
    "ddpify.check.wraps",
    "ddpify.check.writes",
    "ddpify.analysis.rank_tests",
    "ddpify.analysis.context",
    "ddpify.analysis.loops",
    "ddpify.check.rules",  # imports every rule module
)

# Records every ``import libcst.matchers`` (or ``from libcst import matchers``) statement run
# while the modules load, by the module that runs it -- also when the matchers are loaded by then.
SPY = """
import builtins, json, sys
importers = set()
real_import = builtins.__import__

def spy(name, globals=None, locals=None, fromlist=(), level=0):
    who = (globals or {}).get("__name__") or ""
    wanted = name.startswith("libcst.matchers") or name == "libcst" and "matchers" in (fromlist or ())
    if wanted and not who.startswith("libcst.matchers"):  # not the package's own imports
        importers.add(who)
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = spy
for module in MODULES:
    __import__(module)
builtins.__import__ = real_import
print(json.dumps({"importers": sorted(importers), "loaded": "libcst.matchers" in sys.modules}))
"""


def _import(*modules: str) -> dict[str, object]:
    code = f"MODULES = {modules!r}\n{SPY}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_cstutil_and_scope_leave_matchers_unloaded() -> None:
    assert _import("ddpify.tree.cstutil", "ddpify.check.scope") == {"importers": [], "loaded": False}


def test_rules_helpers_and_fact_pass_do_not_import_matchers() -> None:
    assert _import(*CHECK_MODULES, "ddpify.convert.facts", "ddpify.tree.metadata") == {"importers": [], "loaded": False}


def test_checking_a_file_leaves_matchers_unloaded() -> None:
    """The whole cold path: engine, every rule, the fact pass and the findings' positions;
    fixes are built only when applied, so jinja2 (the snippets) is not loaded either."""
    code = (
        "import sys; from pathlib import Path; from ddpify.check.engine import check_source\n"
        "path = Path(sys.argv[1]); result = check_source(path.read_text(), str(path))\n"
        "assert result.findings, 'the benchmark script has findings'\n"
        "print('libcst.matchers' in sys.modules, 'jinja2' in sys.modules)"
    )
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "train_ddp.py"
    done = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False False"
