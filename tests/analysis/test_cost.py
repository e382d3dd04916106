"""The analyses over calls cost work linear in the program (issue 22), on adversarial shapes:
same-named methods of many classes calling each other, chains, lattices (2^n paths), mutual
recursion and deep class hierarchies (``benchmarks/shapes.py``). Work is counted as Python
function calls made by a whole conversion and by a whole ``check`` (deterministic, unlike wall
time); per line of input it must not grow with the size. Before the per-function fixpoints,
the hierarchy of 32 classes took a minute to convert and the methods shape grew quadratically.

Also here: the work budget's conservative answer, and the fixpoint solver itself.
"""

from __future__ import annotations

import cProfile
import pstats
import subprocess
import sys
from pathlib import Path

import pytest

from ddpify.analysis import budget
from ddpify.analysis.fixpoint import Fixpoint
from ddpify.api import convert_source
from ddpify.check.engine import check_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from shapes import SHAPES, program  # noqa: E402

SMALL, LARGE = 12, 48
# Work per line may shrink with size (fixed costs spread out); it may not grow more than
# this factor, which a quadratic analysis exceeds by far (4x lines -> 4x work per line).
GROWTH = 1.3


def _calls(run, source: str) -> int:
    profile = cProfile.Profile()
    profile.enable()
    run(source)
    profile.disable()
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined]


def _check(source: str) -> None:
    # the linter analyses only DDP scripts: make the shape one
    check_source(source.replace("import os\n", "import os\nimport torch.distributed as dist\n", 1) + "dist.init_process_group('gloo')\n")


@pytest.mark.parametrize("run", [convert_source, _check], ids=["convert", "check"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_work_per_line_does_not_grow(shape: str, run) -> None:
    run(program(shape, 2))  # warm the lazy imports, which are not the analysis
    per_line = []
    for size in (SMALL, LARGE):
        source = program(shape, size)
        per_line.append(_calls(run, source) / source.count("\n"))
    assert per_line[1] <= GROWTH * per_line[0], f"{shape}: work per line grew from {per_line[0]:.0f} to {per_line[1]:.0f}"


def test_same_named_methods_past_the_ambiguity_bound_stay_linear() -> None:
    """Past ``name_calls.AMBIGUOUS`` same-named methods, a call through an unknown receiver
    matches none of them; ``self.`` / ``Stage1().`` calls still match theirs. Matched by name
    alone, the pairs grew n² (1.2x work per line from 48 to 192 classes, 2.2x time from 800
    to 1600), which the small sizes above do not show."""
    _check(program("handed_values", 2))
    per_line = []
    for size in (48, 192):
        source = program("handed_values", size)
        per_line.append(_calls(_check, source) / source.count("\n"))
    assert per_line[1] <= 1.1 * per_line[0], f"work per line grew from {per_line[0]:.0f} to {per_line[1]:.0f}"


def test_budget_exhausted_leaves_the_script_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DDPIFY_ANALYSIS_BUDGET", "50")
    source = program("methods", 8)
    result = convert_source(source)
    assert result.output == source
    assert len(result.manual) == 1
    assert "work budget" in result.manual[0].why and "DDPIFY_ANALYSIS_BUDGET" in result.manual[0].todo


def test_budget_exhausted_check_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DDPIFY_ANALYSIS_BUDGET", "50")
    with pytest.raises(budget.Exhausted, match="work budget"):
        _check(program("methods", 8))


def test_budget_exhausted_check_cli_says_not_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "train.py"
    script.write_text(program("methods", 8).replace("import os\n", "import os\nimport torch.distributed as dist\n", 1) + "dist.init_process_group('gloo')\n")
    monkeypatch.setenv("DDPIFY_ANALYSIS_BUDGET", "1")
    done = subprocess.run([sys.executable, "-m", "ddpify", "check", "--no-cache", str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "not checked" in done.stdout + done.stderr and "work budget" in done.stdout + done.stderr


def test_default_budget_is_far_above_the_shapes() -> None:
    source = program("hierarchy", LARGE)
    assert convert_source(source).output != source  # converted, not given up


def test_fixpoint_solves_a_cycle_once_per_node() -> None:
    # a ring of n nodes each the successor's value plus one, capped: a finite lattice
    n, cap = 50, 3
    evaluations = []

    def transfer(key: int, get) -> int:
        evaluations.append(key)
        return min(cap, get((key + 1) % n) + 1)

    solve = Fixpoint(lambda key: [(key + 1) % n], transfer, 0)
    assert [solve(k) for k in range(n)] == [cap] * n
    assert len(evaluations) <= (cap + 1) * n  # each node re-evaluated only when its input grew


def test_fixpoint_dependencies_first_across_components() -> None:
    order = []

    def transfer(key: str, get) -> int:
        order.append(key)
        return 1 if key == "a" else get(chr(ord(key) - 1)) + 1

    solve = Fixpoint(lambda key: {"a": [], "b": ["a"], "c": ["b"]}[key], transfer, 0)
    assert solve("c") == 3
    assert order == ["a", "b", "c"]


SELF_RECURSIVE_METHOD = """\
import torch
from torch.utils.data import DataLoader


class GAN:
    def __init__(self, data, epochs):
        self.data_loader = DataLoader(data, batch_size=4, shuffle=True)
        self.epochs = epochs
%s
        self.optimizer = torch.optim.Adam(self.A.parameters())

    def train(self):
        for epoch in range(self.epochs):
%s
            for x in self.data_loader:
                self.optimizer.zero_grad()
                self.A(x).mean().backward()
                self.optimizer.step()
""" % (
    "\n".join(f"        self.{n} = torch.nn.Linear(4, 4)" for n in "ABCDEF"),
    "\n".join(f"            self.{n}.train()" for n in "ABCDEF"),
)


def test_a_method_calling_its_name_on_an_attribute_ends() -> None:
    """``train()`` calling ``self.G.train()`` (nn.Module's): the summary of what ``train``
    iterates went ``self.G.data_loader``, ``self.G.G.data_loader``... without end, until a real
    GAN file ran out of memory. The references are bounded, so the fixpoint ends, fast."""
    calls = _calls(convert_source, SELF_RECURSIVE_METHOD)
    assert calls < 2_000_000, calls


def test_a_rule_following_returned_metrics_to_callers_is_linear() -> None:
    """DDP036 follows a training function's returned loss to its callers by name. In the
    ``metrics`` shape every ``.run(`` names every class's ``run``: the rule's own work (over a
    check with no rule) must not grow per line, which following each method to every such call
    did (600 classes 7.9 s, 1200 classes 30 s, with the results assigned and compared)."""
    from ddpify.check.rules import BY_CODE

    rule = BY_CODE["DDP036"]

    def own_work(size: int) -> float:
        source = program("metrics", size).replace("import os\n", "import os\nimport torch.distributed as dist\n", 1)
        source += "dist.init_process_group('gloo')\n"
        alone = _calls(lambda s: check_source(s, rules=[rule]), source)
        without = _calls(lambda s: check_source(s, rules=[]), source)
        return (alone - without) / source.count("\n")

    own_work(2)
    # The per-call-site work is small, so the sizes are far apart: 8x the lines grew the work
    # per line 1.47x when every method followed every call of its name, 1.25x since.
    small, large = own_work(24), own_work(192)
    assert large <= 1.35 * small, f"DDP036's work per line grew from {small:.0f} to {large:.0f}"


def test_a_flag_handed_on_around_a_ring_of_methods_ends_shallow() -> None:
    """``module_runs``: every ``run`` hands its parameter to ``self.run(...)``, which by name is
    every class's ``run``, so following where that parameter is a rank flag went one call
    deeper per class: 200 classes overflowed Python's stack and the conversion refused the
    file. The hops are bounded (``parameter_flags.HANDED_ON``): 64 classes convert within a
    stack of 350 frames, which the unbounded walk overflowed."""
    source = program("module_runs", 64)
    convert_source(program("module_runs", 2))  # the lazy imports are not the analysis
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(350)
    try:
        result = convert_source(source)
    finally:
        sys.setrecursionlimit(limit)
    assert result.output != source
