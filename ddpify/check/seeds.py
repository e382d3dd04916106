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
from pathlib import Path

import libcst as cst

from ddpify.analysis import project_files
from ddpify.analysis.context import Process
from ddpify.analysis.project import Helper
from ddpify.analysis.role_hints import is_eval_name
from ddpify.analysis.samplers import SAMPLERS
from ddpify.analysis.seeding import (
    ALL_RNGS,
    DATALOADER,
    LIBRARY_SEEDERS,
    SEEDS,
    consumed,
    consumes_torch,
    drawn_family,
    has_workers,
    reseeded_per_rank,
)
from ddpify.analysis.sources import Role
from ddpify.check.rule import Rule
from ddpify.tree.cstutil import callee_name, code, is_method_call, is_simple_reference, of_types


@dataclass(frozen=True)
class SeedCall:
    call: cst.Call
    family: str  # "torch", "numpy", "random"
    line: int


def family(rule: Rule, call: cst.Call) -> str | None:
    """The RNG a seed call seeds (``torch.manual_seed`` -> "torch"), None for other calls."""
    return next((SEEDS[q] for q in rule.qualified(call) if q in SEEDS), None)


def draw_family(rule: Rule, call: cst.Call) -> str | None:
    """The global RNG a call draws from (``ddpify.analysis.seeding.drawn_family``)."""
    return drawn_family(rule.qualified(call), call)


class Seeds:
    """The seed calls of one file and what they make of the values drawn after them."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.source = rule.file.analysis.source
        self.calls: list[SeedCall] = []
        self.draws: dict[str, list[cst.Call]] = {}
        self.torch_consumers = False
        self.elsewhere: frozenset[str] = frozenset()  # RNGs the project's modules draw from for this file
        for name, calls in self.source.calls_by_callee.items():
            for call in calls:
                seeded = family(rule, call)
                if seeded is not None:
                    self.calls.append(SeedCall(call, seeded, self.source.line(call)))
                    continue
                if rule.qualified(call) & LIBRARY_SEEDERS:  # `seed_everything(42)` of torch_geometric
                    self.calls.extend(SeedCall(call, each, self.source.line(call)) for each in sorted(ALL_RNGS))
                    continue
                drawn = draw_family(rule, call)
                if drawn is not None:
                    self.draws.setdefault(drawn, []).append(call)
                elif consumes_torch(name, rule.qualified(call), call) and not self._workers_draw_nothing(call):
                    self.torch_consumers = True
                elif (drawn_elsewhere := self._project_draws(call)) and self._drawn_alike(call):
                    self.elsewhere |= drawn_elsewhere
        self.calls.sort(key=lambda s: s.line)
        self._busy: set[str] = set()
        self._backward: dict[cst.CSTNode, bool] = {}
        self._step_functions: dict[cst.FunctionDef, bool] = {}

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
        dropout, random augmentation or DataLoader workers; or a function or class of the
        project's modules it calls draws from it (``Helper.draws``). Draws at set-up next to the seed
        (a synthetic dataset, a split) want the same numbers on every rank."""
        inside = set(of_types(seed, cst.Call))
        home = self.source.enclosing_function(seed)
        for draw in self.draws.get(seeded, []):
            if draw in inside:
                continue
            if self.source.enclosing_function(draw) is not home or self._in_loop(draw):
                return True
        return seeded == "torch" and self.torch_consumers or seeded in self.elsewhere

    def unseeded_training_draws(self) -> list[cst.Call]:
        """The first torch draw of each training step (a function or loop that calls
        ``backward()``) where nothing seeds torch, neither this file nor any file of its project:
        torch's default generator starts from the same fixed seed in every process, so every rank
        draws the same noise, timesteps or masks."""
        if any(s.family == "torch" for s in self.calls) or self._project_may_seed_torch():
            return []
        found: dict[cst.CSTNode, cst.Call] = {}
        for draw in self.draws.get("torch", []):
            step = self._training_step(draw)
            if step is not None and (step not in found or self.source.line(draw) < self.source.line(found[step])):
                found[step] = draw
        return sorted(found.values(), key=self.source.line)

    def unseeded_worker_loaders(self) -> list[cst.Call]:
        """DataLoaders with worker processes (and no ``generator=`` of their own) over a dataset
        that draws random numbers, where nothing seeds torch: each seeds its workers from
        torch's default generator, at the same state on every rank, so worker k of every rank
        draws the same augmentation (its ``random``, NumPy and torch streams all follow that seed)."""
        if any(s.family == "torch" for s in self.calls) or self._project_may_seed_torch():
            return []
        found = []
        for call in self.source.calls_by_callee.get("DataLoader", []):
            if not self.rule.qualified(call) & DATALOADER or not has_workers(call):
                continue
            if any(a.keyword is not None and a.keyword.value == "generator" for a in call.args):
                continue
            if self._evaluates(call):
                continue  # an evaluation loader: no augmentation meant to differ
            dataset = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "dataset"), None)
            if dataset is not None and self._draws_when_read(dataset):
                found.append(call)
        return found

    def unseeded_workers(self) -> list[tuple[cst.FunctionDef, cst.Call]]:
        """The spawn targets of this file (``mp.spawn(main_worker, ...)``, a launch helper's) that
        train (a backward, or a project helper or class that trains, in what they reach) and draw
        from or consume torch's RNG (``consumer``, the first such call) while nothing they run
        seeds it: not the code they reach, not the module-level code each fresh worker re-runs,
        not the project modules it imports or the project helpers and classes they call
        (``Helper.seeds_torch``), nor a seed-named helper of an installed package. A seed in the
        launching process stays there (DDP034's finding), and every worker starts from torch's
        fixed default seed, the same on every rank. Forked children (``mp.Process``) inherit the
        parent's state instead; they are left out. Each worker is asked about what it reaches."""
        context, project = self.rule.file.analysis.context, self.source.project
        fresh = [f for f, start in self.source.spawned.items() if not any(q.endswith(".Process") for q in self.rule.qualified(start))]
        if not fresh or project.depth <= 0:
            return []
        imports = self.source.of_types(cst.Import, cst.ImportFrom)
        if any(h.seeds_torch for statement in imports for h in project.on_import(statement)):
            return []
        rerun = [
            c
            for c in self.source.of_types(cst.Call)
            if self.source.enclosing_function(c) is None and context.process(c) is not Process.PARENT
        ]
        if any(self._may_seed_torch(call) for call in rerun if isinstance(call, cst.Call)):
            return []
        found = []
        for worker in fresh:
            reached = sorted(context.reachable([worker]), key=self.source.line)
            calls = [c for f in reached for c in self.source.of_types_in(f, cst.Call) if isinstance(c, cst.Call)]
            if any(self._may_seed_torch(call) for call in calls) or not self._trains(reached, calls):
                continue
            consumer = next((c for c in calls if self._consumes_torch(c)), None)
            if consumer is not None:
                found.append((worker, consumer))
        return found

    def _trains(self, functions: list[cst.FunctionDef], calls: list[cst.Call]) -> bool:
        """Code that runs a training step: a backward, or a project helper or class that does."""
        if any(self._calls_backward(f) for f in functions):
            return True
        return any((helper := self._project_helper(call)) is not None and helper.trains for call in calls)

    def _may_seed_torch(self, call: cst.Call) -> bool:
        """A call that seeds torch, or may: a project helper or class that does, or a project
        function the analysis cannot read."""
        helper = self._project_helper(call)
        if helper is None and is_simple_reference(call.func) and self.source.project.home_of(code(call.func)) is not None:
            return True  # the project's, unread
        if helper is None and "seed" in (callee_name(call) or "").lower() and not self.rule.qualified(call) & SEEDS.keys():
            return True  # an installed package's seed helper (timm's `random_seed(seed, rank)`): it may seed torch
        return (
            family(self.rule, call) == "torch" or bool(self.rule.qualified(call) & LIBRARY_SEEDERS) or bool(helper and helper.seeds_torch)
        )

    def _consumes_torch(self, call: cst.Call) -> bool:
        """A call that takes numbers from torch's RNG while training: a draw in a training step
        (set-up draws, a synthetic dataset, are meant to be alike on every rank), dropout or
        augmentation, a loader with workers, or a project function or class whose code does
        (``Helper.draws``)."""
        if draw_family(self.rule, call) == "torch":
            return self._training_step(call) is not None
        if "torch" in self._project_draws(call):
            return True
        return consumes_torch(callee_name(call) or "", self.rule.qualified(call), call) and not self._workers_draw_nothing(call)

    def _evaluates(self, loader: cst.Call) -> bool:
        """An evaluation loader: by where its batches go, or, where that is not known, by the
        name it is given (``test_loader``: a tie-breaker, ``ddpify.analysis.role_hints``)."""
        role = self.rule.file.analysis.dataflow.role_of(loader)
        if role is not Role.UNKNOWN:
            return role is Role.EVAL
        parent = self.source.parent(loader)
        return isinstance(parent, cst.Assign) and any(is_eval_name(code(t.target)) for t in parent.targets)

    def _draws_when_read(self, dataset: cst.BaseExpression) -> bool:
        """The dataset is built (directly or through a variable) by a class or function of this
        file or of the project's modules whose code draws random numbers."""
        values = [v for _, v in self.source.assignments.get(dataset.value, [])] if isinstance(dataset, cst.Name) else [dataset]
        for value in values:
            if not isinstance(value, cst.Call):
                continue
            if self._project_draws(value):
                return True
            name = value.func.value if isinstance(value.func, cst.Name) else None
            classes = [k for k in self.source.of_types(cst.ClassDef) if k.name.value == name and self.source.enclosing_function(k) is None]
            methods = [m for k in classes for m in self.source.of_types_in(k, cst.FunctionDef) if m.name.value != "__init__"]
            if any(consumed(self.source, m) for m in methods):
                return True  # what `__getitem__` draws runs in the workers (`__init__` runs once, in the main process)
        return False

    def _workers_draw_nothing(self, call: cst.Call) -> bool:
        """A DataLoader whose workers read a dataset of a class of this file or of the project's
        modules that draws nothing (GaLore's tokenised ``PreprocessedIterableDataset``): the
        worker seeds torch gives it are never used."""
        if not self.rule.qualified(call) & DATALOADER:
            return False
        dataset = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "dataset"), None)
        values = [v for _, v in self.source.assignments.get(dataset.value, [])] if isinstance(dataset, cst.Name) else [dataset]
        if not values or not all(isinstance(v, cst.Call) and isinstance(v.func, cst.Name) for v in values):
            return False
        return all(self._known_class(v) and not self._draws_when_read(v) for v in values if isinstance(v, cst.Call))

    def _known_class(self, call: cst.Call) -> bool:
        """``call`` builds a class this file defines or one the project's modules define (read)."""
        assert isinstance(call.func, cst.Name)
        name = call.func.value
        if any(k.name.value == name for k in self.source.of_types(cst.ClassDef) if self.source.enclosing_function(k) is None):
            return True
        file = self.source.project.file_of(name)
        if file is None or self.source.project.depth <= 0:
            return False
        home, defined = project_files.defining_module(file, name)
        try:
            text = home.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        return re.search(rf"^class {re.escape(defined)}\b", text, re.M) is not None

    def _project_may_seed_torch(self) -> bool:
        path, text = Path(self.rule.file.path), self.rule.file.source
        return project_files.may_seed_torch_nearby(path, text) if path.is_file() else project_files.may_seed_torch(text)

    def _training_step(self, draw: cst.Call) -> cst.CSTNode | None:
        """The innermost loop around ``draw`` whose body calls ``backward()``, or the function
        around it that does so once per call (``train_step(batch)``; a ``main()`` whose loop calls
        it is no step: its set-up draws run once)."""
        for ancestor in self.source.ancestors(draw):
            if isinstance(ancestor, (cst.For, cst.While)) and self._calls_backward(ancestor):
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return ancestor if isinstance(ancestor, cst.FunctionDef) and self._steps_once(ancestor) else None
        return None

    def _steps_once(self, function: cst.FunctionDef) -> bool:
        """``function`` calls ``backward()``, outside any loop of its own (asked once per function)."""
        if function not in self._step_functions:
            loops = self.source.of_types_in(function.body, cst.For, cst.While)
            self._step_functions[function] = self._calls_backward(function) and not any(self._calls_backward(loop) for loop in loops)
        return self._step_functions[function]

    def _calls_backward(self, node: cst.CSTNode) -> bool:
        if node not in self._backward:  # asked once per loop or function: linear in the file
            self._backward[node] = any(is_method_call(c, "backward") for c in self.source.of_types_in(node, cst.Call))
        return self._backward[node]

    def _project_helper(self, call: cst.Call) -> Helper | None:
        """The project function ``call`` runs, or the project class it builds (``Class.__init__``)."""
        helper = self.source.project.helper(call)
        if helper is None and is_simple_reference(call.func):
            helper = self.source.project.named(f"{code(call.func)}.__init__")
        return helper

    def _project_draws(self, call: cst.Call) -> frozenset[str]:
        """What a call of a project function, or the building of a project class
        (``VisionTransformer(config)``: its dropout draws in every forward), draws from."""
        project = self.source.project
        helper = self._project_helper(call)
        if helper is None and isinstance(call.func, cst.Name):  # `Exp = Exp_Forecast` (picked by task) then `Exp(args)`
            picked = [v for _, v in self.source.assignments.get(call.func.value, [])]
            if picked and all(v is not None and is_simple_reference(v) for v in picked):
                found = (project.named(f"{code(v)}.__init__") for v in picked if v is not None)
                return frozenset().union(*(h.draws for h in found if h is not None))
        return helper.draws if helper is not None else frozenset()

    def _drawn_alike(self, call: cst.Call) -> bool:
        """A project call's draws come in the same order on every rank: it runs on every rank
        (not one rank's own: yolov4's LossHistory on local rank 0), and what it builds is not
        read only by workers reseeded with the rank."""
        return self.rule.file.analysis.context.every_rank(call) and not self._read_by_reseeded_workers(call)

    def _read_by_reseeded_workers(self, call: cst.Call) -> bool:
        """What ``call`` builds (a dataset) is read only by DataLoaders whose workers are
        reseeded with the rank (``reseeded_per_rank``), by samplers and by ``len``: its draws run
        in those workers, apart on every rank (yolov4's YoloDataset augmentation)."""
        loaders = []
        for occurrence in self.rule.file.analysis.dataflow.values.flow(call).occurrences:
            parent = self.source.parent(occurrence.node)
            if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is occurrence.node:
                continue  # bound to a name: its reads follow
            user = self.source.parent(parent) if isinstance(parent, cst.Arg) else None
            qualified = self.rule.qualified(user) if isinstance(user, cst.Call) else set()
            if qualified & DATALOADER:
                loaders.append(user)
            elif not qualified & (SAMPLERS | {"builtins.len"}):
                return False
        return bool(loaders) and all(reseeded_per_rank(loader) for loader in loaders if isinstance(loader, cst.Call))

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
