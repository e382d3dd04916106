"""Random number generators and the values drawn from them: which RNG a seed call seeds,
whether a value differs between processes (a rank, or a draw from an RNG that each process
seeded differently or not at all), and whether the script consumes an RNG's numbers at all.

Python's ``random`` and NumPy's global RNG start from OS entropy, so an unseeded draw differs
per process; torch's default generator starts from a fixed seed, so an unseeded torch draw is
the same on every rank. Computed once per file (``FileInfo.memo``), for DDP011 and DDP035.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddpify.analysis.seeding import SEEDS
from ddpify.check.rule import Rule
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_simple_reference, of_types

_NOT_DRAWS = re.compile(r"(^|\.)(seed|getstate|setstate|get_state|set_state|Random|RandomState|default_rng|Generator|SeedSequence)$")
_TORCH_DRAWS = re.compile(r"^torch\.(rand|randn|randint|randperm|normal|bernoulli|multinomial|poisson|rand_like|randn_like|randint_like)$")
# What consumes torch's RNG after seeding without naming it: in-place random fills, dropout,
# random augmentation, masks and collators, and DataLoader workers (seeded from it). Weight
# initialisers of ``torch.nn.init`` are not: the same initial model on every rank is what DDP wants.
_TORCH_CONSUMERS = re.compile(
    r"^(normal_|uniform_|random_|bernoulli_|exponential_|dropout\w*|Dropout\w*|Random\w+|RandAugment|AutoAugment|"
    r"TrivialAugment\w*|AugMix|\w*[Mm]ixup\w*|\w*[Cc]ut[Mm]ix\w*|\w*[Aa]ugment\w*|\w*[Cc]ollator|\w*transforms?|"
    r"create_transform|make_transforms?|build_transforms?)$"
)


@dataclass(frozen=True)
class SeedCall:
    call: cst.Call
    family: str  # "torch", "numpy", "random"
    line: int


def family(rule: Rule, call: cst.Call) -> str | None:
    """The RNG a seed call seeds (``torch.manual_seed`` -> "torch"), None for other calls."""
    return next((SEEDS[q] for q in rule.qualified(call) if q in SEEDS), None)


def draw_family(rule: Rule, call: cst.Call) -> str | None:
    """The global RNG a call draws from (``random.randint`` -> "random", ``np.random.rand`` ->
    "numpy"); None for a draw from a generator of its own (``generator=sample_rng``)."""
    if any(a.keyword is not None and a.keyword.value == "generator" for a in call.args):
        return None
    for name in rule.qualified(call):
        if _NOT_DRAWS.search(name):
            return None
        if name.startswith("random.") and name.count(".") == 1:
            return "random"
        if name.startswith("numpy.random."):
            return "numpy"
        if _TORCH_DRAWS.match(name):
            return "torch"
    return None


class Seeds:
    """The seed calls of one file and what they make of the values drawn after them."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.source = rule.file.analysis.source
        self.calls: list[SeedCall] = []
        self.draws: dict[str, list[cst.Call]] = {}
        self.torch_consumers = False
        for name, calls in self.source.calls_by_callee.items():
            for call in calls:
                seeded = family(rule, call)
                if seeded is not None:
                    self.calls.append(SeedCall(call, seeded, self.source.line(call)))
                    continue
                drawn = draw_family(rule, call)
                if drawn is not None:
                    self.draws.setdefault(drawn, []).append(call)
                elif (_TORCH_CONSUMERS.match(name) and not _initialiser(rule, call)) or (
                    self.rule.qualified(call) & names.DATALOADER and _has_workers(call)
                ):
                    self.torch_consumers = True
        self.calls.sort(key=lambda s: s.line)
        self._busy: set[str] = set()

    def varies_per_process(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        """``value`` may differ between processes: it names a rank, or draws from an RNG that
        each process seeded differently or not at all, also through a variable it reads."""
        rank_tests = self.rule.file.analysis.rank_tests
        if rank_tests.depends_on_rank(value):
            return True
        for call in [value, *of_types(value, cst.Call)] if isinstance(value, cst.Call) else of_types(value, cst.Call):
            drawn = draw_family(self.rule, call)
            if drawn is not None and self._draw_varies(call, drawn):
                return True
        if depth >= 2:
            return False
        references = [value] if is_simple_reference(value) else [n for n in of_types(value, cst.Name)]
        for reference in references:
            target = code(reference)
            if target in self._busy:
                continue
            self._busy.add(target)
            try:
                for _, assigned in self.source.assignments.get(target, []):
                    if assigned is not None and self.varies_per_process(assigned, depth + 1):
                        return True
            finally:
                self._busy.discard(target)
        return False

    def _draw_varies(self, draw: cst.Call, drawn: str) -> bool:
        """The RNG's last seeding before the draw names a rank; or there is none and the RNG
        starts from OS entropy (random, numpy)."""
        line = self.source.line(draw)
        before = [s for s in self.calls if s.family == drawn and s.line < line]
        if not before:
            return drawn != "torch"
        seed = before[-1].call
        return bool(seed.args) and self.varies_per_process(seed.args[0].value, depth=1)

    def consumed(self, seeded: str, seed: cst.Call) -> bool:
        """Whether the script draws from the RNG it seeds while it trains: in a loop, or in
        another function than the seed's (a per-step augmentation helper); for torch also
        dropout, random augmentation or DataLoader workers. Draws at set-up next to the seed
        (a synthetic dataset, a split) want the same numbers on every rank."""
        inside = set(of_types(seed, cst.Call))
        home = self.source.enclosing_function(seed)
        for draw in self.draws.get(seeded, []):
            if draw in inside:
                continue
            if self.source.enclosing_function(draw) is not home or self._in_loop(draw):
                return True
        return seeded == "torch" and self.torch_consumers

    def _in_loop(self, node: cst.CSTNode) -> bool:
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)):
                return True
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return False
        return False


def seeds(rule: Rule) -> Seeds:
    memo = rule.file.memo
    if "seeds" not in memo:
        memo["seeds"] = Seeds(rule)
    return memo["seeds"]  # type: ignore[return-value]


def _has_workers(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "num_workers":
            return not (isinstance(arg.value, cst.Integer) and arg.value.evaluated_value == 0)
    return False


def _initialiser(rule: Rule, call: cst.Call) -> bool:
    """``torch.nn.init.normal_(w)``: a weight initialiser, the same on every rank on purpose."""
    return any(q.startswith("torch.nn.init.") for q in rule.qualified(call))
