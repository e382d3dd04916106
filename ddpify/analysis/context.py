"""Where a statement runs: which ranks (all / main only / once per node / non-main / some),
which kind of run (distributed or single-process branch), which process (the parent that calls
``mp.spawn`` or the workers), and whether a ``print`` there still prints on every rank.

The ranks come from the enclosing ``if`` / ``else`` / conditional expressions / ``and`` /
``or``, from early exits (``if rank != 0: return`` above a statement), and from the callers:
a function of this file runs where its call sites run (all of them, transitively), a spawn
target runs on every worker. Each node's answer is computed once and cached; a block's early
exits are scanned once, front to back, as far as a query needs.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.callers import Callers, Key, first_on_the_way, uncalled
from ddpify.analysis.divergence import Divergence, Divergent
from ddpify.analysis.fixpoint import Fixpoint
from ddpify.analysis.rank_tests import RankTests
from ddpify.analysis.ranks import EVERY, FLAGS, NOWHERE, Branch, Ranks, RankSelection
from ddpify.analysis.source import Source
from ddpify.tree import cstutil
from ddpify.tree.cstutil import is_simple_reference

if TYPE_CHECKING:
    from ddpify.analysis.dataflow import DataFlow

# Helpers of other modules that replace ``builtins.print`` on non-main ranks (DETR, DeiT, MAE,
# DINO: ``utils.init_distributed_mode(args)`` calls ``setup_for_distributed(rank == 0)``), by
# name, for modules the project reading cannot see (installed packages, deeper imports).
_PRINT_OVERRIDE = re.compile(r"^(setup_for_distributed|init_distributed_mode|suppress_print\w*|disable_print\w*|silence_print\w*)$")
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
_EXIT_CALLS = frozenset({"sys.exit", "builtins.exit", "builtins.quit", "os._exit"})
_BUILTINS = frozenset({"builtins", "__builtin__", "__builtins__"})


class Process(enum.Enum):
    """Which process of a job runs a statement."""

    EVERY = "every process"  # launched by torchrun (or run alone): each rank runs the script
    PARENT = "the launching process"  # around mp.spawn: runs once per job
    WORKER = "a spawned worker"


@dataclass(frozen=True)
class Execution:
    """The execution context of one statement or expression."""

    ranks: Ranks
    process: Process

    @property
    def selection(self) -> RankSelection:
        return self.ranks.selection

    @property
    def branch(self) -> Branch:
        return self.ranks.branch


def is_main_guard(node: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (either side)."""
    if not isinstance(node, cst.If) or not isinstance(node.test, cst.Comparison) or len(node.test.comparisons) != 1:
        return False
    target = node.test.comparisons[0]
    sides = (node.test.left, target.comparator)
    names = [s.value for s in sides if isinstance(s, cst.Name)]
    strings = [s.evaluated_value for s in sides if isinstance(s, cst.SimpleString)]
    return isinstance(target.operator, cst.Equal) and names == ["__name__"] and strings == ["__main__"]


class Context:
    """Execution contexts of one file's statements, computed on demand and cached."""

    def __init__(self, source: Source, rank_tests: RankTests, dataflow: Callable[[], DataFlow] | None = None) -> None:
        self.source = source
        self.rank_tests = rank_tests
        self._dataflow = dataflow
        self._local: dict[cst.CSTNode, Ranks] = {}
        self._prefixes: dict[cst.CSTNode, list[Ranks]] = {}
        self._indexes: dict[cst.CSTNode, dict[cst.CSTNode, int]] = {}
        self._scanning: set[cst.CSTNode] = set()

    # ---------------------------------------------------------------- the answers
    def of(self, node: cst.CSTNode) -> Execution:
        return Execution(self.ranks(node), self.process(node))

    def selection(self, node: cst.CSTNode) -> RankSelection:
        return self.ranks(node).selection

    def branch(self, node: cst.CSTNode) -> Branch:
        return self.ranks(node).branch

    def every_rank(self, node: cst.CSTNode) -> bool:
        """Runs on every rank alike: no rank test around it (here or at any caller) and not
        in the process that launches the workers."""
        return self.selection(node) is RankSelection.ALL and self.process(node) is not Process.PARENT

    # ---------------------------------------------------------------- rank-uniform decisions
    @functools.cached_property
    def divergence(self) -> Divergence:
        """Which values and decisions may differ between ranks (``ddpify.analysis.divergence``)."""
        return Divergence(self.source, self.rank_tests, self._dataflow or self._own_dataflow)

    def _own_dataflow(self) -> DataFlow:
        from ddpify.analysis.dataflow import DataFlow

        return DataFlow(self.source)

    def uniform(self, test: cst.BaseExpression) -> bool:
        """Whether every rank computes ``test`` alike: it reads no clock, random numbers, rank or
        per-rank (sharded) data."""
        return self.divergence.uniform(test)

    def divergent_condition(self, node: cst.CSTNode) -> Divergent | None:
        """The innermost decision on the way to ``node`` that ranks may take differently (an
        ``if`` on the clock, on a metric of a sharded loader, an ``except`` handler...), here or
        at a call site of its function; None when every rank that runs the code reaches it. A
        collective there hangs the ranks that do not skip it."""
        return self.divergence.decision(node)

    def ranks(self, node: cst.CSTNode) -> Ranks:
        """Where ``node`` may / must run: its function's own conditions and its callers'."""
        result = self.local(node)
        function = self.source.enclosing_function(node)
        return result & self.function(function) if function is not None else result

    def local(self, node: cst.CSTNode) -> Ranks:
        """Where ``node`` runs as far as its own function (or the module) says."""
        chain: list[tuple[cst.CSTNode, cst.CSTNode]] = []
        current = node
        while current not in self._local:
            parent = self.source.parent(current)
            if parent is None or (isinstance(parent, cst.FunctionDef) and current is parent.body):
                self._local[current] = EVERY
                break
            chain.append((current, parent))
            current = parent
        found = self._local[current]
        for child, parent in reversed(chain):
            found = found & self._step(child, parent)
            self._local[child] = found
        return found

    # ---------------------------------------------------------------- one step down the tree
    def _step(self, child: cst.CSTNode, parent: cst.CSTNode) -> Ranks:
        if isinstance(parent, (cst.If, cst.IfExp)):
            if child is parent.body or child is parent.orelse:
                found = self._test(parent.test, negated=child is parent.orelse)
                if found == EVERY and self._joining_branch.get(parent, child is parent.body) != (child is parent.body):
                    return ~FLAGS["distributed"]  # `if launcher == "none": <here> else: init_dist(...)`
                return found
        elif isinstance(parent, cst.While) and child is parent.body:
            return self._test(parent.test)
        elif isinstance(parent, cst.BooleanOperation) and child is parent.right:
            return self._test(parent.left, negated=isinstance(parent.operator, cst.Or))
        elif isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return self._prefix(parent, child)
        return EVERY

    @functools.cached_property
    def _joining_branch(self) -> dict[cst.CSTNode, bool]:
        from ddpify.analysis.distributed_code import joining_branches

        return joining_branches(self.source)

    def _test(self, test: cst.BaseExpression, *, negated: bool = False) -> Ranks:
        """A condition as it restricts ranks: one every rank answers alike restricts none."""
        ranks = self.rank_tests.ranks(test)
        if not ranks.depends_on_process:
            return EVERY
        return ~ranks if negated else ranks

    def _prefix(self, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode) -> Ranks:
        """Where the statements of ``block`` before ``child`` let it run (early exits)."""
        index = self._indexes.get(block)
        if index is None:
            index = self._indexes[block] = {s: i for i, s in enumerate(block.body)}
        position = index.get(child)
        if position is None:
            return EVERY
        prefix = self._prefixes.setdefault(block, [EVERY])
        while len(prefix) <= position:
            if block in self._scanning:  # asked again while scanning it: what is known so far
                return prefix[-1]
            self._scanning.add(block)
            try:
                prefix.append(prefix[-1] & self._after_exit(block.body[len(prefix) - 1]))
            finally:
                self._scanning.discard(block)
        return prefix[position]

    def _after_exit(self, statement: cst.BaseStatement) -> Ranks:
        """Where the code after ``statement`` runs: ``if rank != 0: return`` lets main through."""
        if not isinstance(statement, cst.If):
            return EVERY
        if self._exits(statement.body):
            return self._test(statement.test, negated=True)
        if isinstance(statement.orelse, cst.Else) and self._exits(statement.orelse.body):
            return self._test(statement.test)
        return EVERY

    def _exits(self, suite: cst.BaseSuite) -> bool:
        """The block always leaves: it ends with return / raise / continue / break / sys.exit()."""
        body = suite.body
        if isinstance(suite, cst.IndentedBlock):
            if not body or not isinstance(body[-1], cst.SimpleStatementLine):
                return False
            body = body[-1].body
        if not body:
            return False
        last = body[-1]
        if isinstance(last, _EXITS):
            return True
        return isinstance(last, cst.Expr) and isinstance(last.value, cst.Call) and bool(self.source.qualified(last.value) & _EXIT_CALLS)

    # ---------------------------------------------------------------- callers
    def function(self, function: cst.FunctionDef) -> Ranks:
        """Where ``function`` runs: every rank for a spawn target; else wherever its call sites
        (and the places that hand it over, ``callbacks=[f]``) run; where it is defined when
        this file never calls it; nowhere when it is never called in a script that sets up its
        processes as it is started (the project cannot import it to call it). Code reached only
        from a cycle with no way in that the file shows runs anywhere (unknown)."""
        if self._starts_at_import and uncalled(self._callers, function):
            return NOWHERE
        found = self._where(function)
        return found if found.may else EVERY

    @functools.cached_property
    def _starts_at_import(self) -> bool:
        """Module-level code outside the ``__main__`` block joins a process group or spawns."""
        calls = [*self.source.calls_by_callee.get("init_process_group", []), *self.source.process_starts]
        return any(self.source.enclosing_function(c) is None and not self.under_main_guard(c) for c in calls)

    @functools.cached_property
    def _callers(self) -> Callers:
        return Callers(self.source, mentions=True)

    @functools.cached_property
    def _where(self) -> Fixpoint[Key, Ranks]:
        """Where each function runs and each method name is called: one fixpoint over the
        callers (``ddpify.analysis.callers``)."""
        return Fixpoint(self._where_depends, self._where_from, NOWHERE, self.source.budget)

    def _where_depends(self, key: Key) -> list[Key]:
        if isinstance(key, cst.FunctionDef):
            if key in self.source.spawned:
                return []
            if not self._callers.called(key):  # where it is defined
                enclosing = self.source.enclosing_function(key)
                return [enclosing] if enclosing is not None else []
        return self._callers.frames(key)

    def _where_from(self, key: Key, where: Callable[[Key], Ranks]) -> Ranks:
        def at(node: cst.CSTNode) -> Ranks:
            enclosing = self.source.enclosing_function(node)
            return self.local(node) & where(enclosing) if enclosing is not None else self.local(node)

        found = NOWHERE
        if isinstance(key, cst.FunctionDef):
            if key in self.source.spawned:
                return EVERY
            if not self._callers.called(key):
                return at(key)
            name = self._callers.method_name(key)
            if name is not None:
                found = where(name)
        for site in self._callers.sites(key):
            if found == EVERY:
                break
            found = found | at(site)
        return found

    def call_sites(self, function: cst.FunctionDef) -> list[cst.Call]:
        """``Source.call_sites``, plus ``ClassName(...)`` for an ``__init__``."""
        sites = self.source.call_sites(function)
        return sites + self._callers.class_calls(function) if self.source.enclosing_class(function) is not None else sites

    def restriction(self, node: cst.CSTNode, *, callers: bool = True) -> cst.BaseExpression | None:
        """The innermost rank test that narrows where ``node`` runs (an enclosing condition,
        an early exit above it, or, with ``callers``, one at a call site of its function), for
        messages."""
        child = node
        for parent in self.source.ancestors(node):
            step = self._step(child, parent)
            if step.depends_on_process:
                if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                    return self._exit_test(parent, child)
                if isinstance(parent, (cst.If, cst.IfExp, cst.While)):
                    return parent.test
                if isinstance(parent, cst.BooleanOperation):
                    return parent.left
            if isinstance(parent, cst.FunctionDef):
                return self._restriction_at_entry(parent) if callers else None
            child = parent
        return None

    @functools.cached_property
    def _restriction_at_entry(self) -> Callable[[cst.FunctionDef], cst.BaseExpression | None]:
        """The innermost rank test on the way to each function, solved once per function."""
        return first_on_the_way(self._callers, lambda site: self.restriction(site, callers=False), self.source.budget, self.source.spawned)

    def _exit_test(self, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode) -> cst.BaseExpression | None:
        found: cst.BaseExpression | None = None
        for statement in block.body:
            if statement is child:
                break
            if isinstance(statement, cst.If) and self._after_exit(statement).depends_on_process:
                found = statement.test
        return found

    def at_import_time(self, node: cst.CSTNode) -> bool:
        """Module-level code outside the ``__main__`` block and outside classes, or a function
        called from there (directly or through this file's other functions): it runs when the
        file is imported or started, before a ``__main__`` block can set a process group up."""
        function = self.source.enclosing_function(node)
        if function is None:
            return self._imported_here(node) or False
        return bool(self._import_time_entry(function))

    def _imported_here(self, node: cst.CSTNode) -> bool | None:
        top = self.source.enclosing_function(node) is None and self.source.enclosing_class(node) is None
        return True if top and not self.under_main_guard(node) else None

    @functools.cached_property
    def _import_time_entry(self) -> Callable[[cst.FunctionDef], bool | None]:
        return first_on_the_way(Callers(self.source, mentions=False), self._imported_here, self.source.budget)

    def under_main_guard(self, node: cst.CSTNode) -> bool:
        """Inside ``if __name__ == "__main__":``."""
        return any(is_main_guard(a) for a in self.source.ancestors(node))

    # ---------------------------------------------------------------- processes
    @functools.cached_property
    def workers(self) -> set[cst.FunctionDef]:
        """Functions a spawned worker runs: the spawn targets and what they call, transitively."""
        return self._reachable(list(self.source.spawned))

    @functools.cached_property
    def parent_functions(self) -> set[cst.FunctionDef]:
        """Functions the launching process runs that no worker reaches: called from
        module-level code, transitively, and those that start the workers themselves (a
        ``train_from_folder`` that calls ``mp.spawn``, reached through ``fire.Fire`` or a
        console-script entry point this file does not call)."""
        top = [
            f
            for call in self.source.of_types(cst.Call)
            if self.source.enclosing_function(call) is None
            for f in self.source.functions_called(call)
        ]
        spawning = [f for call in self.source.spawned.values() if (f := self.source.enclosing_function(call)) is not None]
        return self._reachable(top + spawning) - self.workers

    def _reachable(self, start: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
        found: set[cst.FunctionDef] = set()
        todo = list(start)
        while todo:
            function = todo.pop()
            if function not in found:
                found.add(function)
                todo.extend(f for call in self.source.of_types_in(function.body, cst.Call) for f in self.source.functions_called(call))
        return found

    def process(self, node: cst.CSTNode) -> Process:
        """The workers (code a spawn target reaches), the parent (the rest of a file that
        spawns: ``main()`` around ``mp.spawn``, the ``__main__`` block), or every process
        (no spawn, or code whose caller is unknown)."""
        if not self.source.spawned:
            return Process.EVERY
        function = self.source.enclosing_function(node)
        if function is None:
            # module-level code outside the __main__ block runs again in each spawned worker
            return Process.PARENT if self.under_main_guard(node) else Process.EVERY
        while function is not None:
            if function in self.workers:
                return Process.WORKER
            if function in self.parent_functions:
                return Process.PARENT
            function = self.source.enclosing_function(function)
        return Process.EVERY

    # ---------------------------------------------------------------- output
    def print_silenced(self, call: cst.CSTNode) -> bool:
        """A ``print`` that runs after ``builtins.print`` was replaced for the non-main ranks
        (``setup_for_distributed(is_master)``, ``builtins.print = ...``)."""
        return any(self._after(point, direct, call) for point, direct in self._print_overrides)

    def tagged_per_rank(self, call: cst.Call) -> bool:
        """Output that names its rank (``print(f"[GPU{rank}] ...")``, ``tqdm(desc=f"rank {rank}")``):
        one line per rank is what it means to write."""
        return any(
            self.rank_tests.depends_on_rank(arg.value)
            for arg in call.args
            if arg.keyword is None or arg.keyword.value in ("desc", "postfix")
        )

    def per_rank_file(self, call: cst.Call) -> bool:
        """A write or load whose file names the rank (``f"queue{rank}.pth"``, a path variable
        computed from the rank, ``Path(d, f"result-{rank}.json").write_text(...)``): a file per
        rank, which each rank writes and reads alone, as meant."""
        if self.tagged_per_rank(call):
            return True
        parts = [arg.value for arg in call.args]
        if isinstance(call.func, cst.Attribute):
            parts.append(call.func.value)  # the path a method writes through
        for part in parts:
            if self.rank_tests.depends_on_rank(part):
                return True
            if is_simple_reference(part):  # path = os.path.join(d, "queue" + str(rank) + ".pth")
                assigned = self.source.assignments.get(cstutil.code(part), [])
                if assigned and all(v is not None and self.rank_tests.depends_on_rank(v) for _, v in assigned):
                    return True
        return False

    @functools.cached_property
    def _print_overrides(self) -> list[tuple[cst.CSTNode, bool]]:
        """Where ``print`` gets replaced, and whether in place (an assignment to
        ``builtins.print`` / ``setattr(builtins, "print", ...)``) or by a call (of this file's
        function that makes one, or of such a helper of another module)."""
        points: list[tuple[cst.CSTNode, bool]] = []
        for node in [*self.source.of_types(cst.Assign), *self.source.calls_by_callee.get("setattr", [])]:
            if self._replaces_print(node):
                points.append((node, True))
                function = self.source.enclosing_function(node)
                if function is not None:
                    points.extend((site, False) for site in self.call_sites(function))
        project = self.source.project
        for name, calls in self.source.calls_by_callee.items():
            if name in self.source.functions:
                continue
            for call in calls:
                helper = project.helper(call)
                if helper.silences_print if helper is not None else _PRINT_OVERRIDE.match(name):
                    points.append((call, False))
        return points

    def print_overriding_functions(self) -> set[cst.FunctionDef]:
        """This file's module-level functions that replace ``print`` for the other ranks
        when called (themselves, or through a call of one that does)."""
        found = set()
        for point, _ in self._print_overrides:
            function = self.source.enclosing_function(point)
            if function is not None and self.source.enclosing_class(function) is None:
                found.add(function)
        return found

    def _replaces_print(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Assign):
            return any(
                self._is_builtins(t.target.value)
                for t in node.targets
                if isinstance(t.target, cst.Attribute) and t.target.attr.value == "print"
            )
        if isinstance(node, cst.Call) and len(node.args) >= 2:
            name = node.args[1].value
            return isinstance(name, cst.SimpleString) and name.evaluated_value == "print" and self._is_builtins(node.args[0].value)
        return False

    def _is_builtins(self, node: cst.BaseExpression) -> bool:
        """``builtins`` / ``__builtin__`` (``import builtins as __builtin__``) / ``__builtins__``."""
        return "builtins" in self.source.qualified(node) or (isinstance(node, cst.Name) and node.value in _BUILTINS)

    def _called_after(self, point: cst.CSTNode, here: cst.FunctionDef, there: cst.FunctionDef, seen: set[cst.FunctionDef]) -> bool:
        """Whether ``there`` is called from ``here`` after ``point`` (directly, or through
        functions called there after it; each function looked at once)."""
        seen.add(there)
        for site in self.call_sites(there):
            caller = self.source.enclosing_function(site)
            if caller is here and self.source.line(site) > self.source.line(point):
                return True
            if caller is not None and caller is not here and caller not in seen and self._called_after(point, here, caller, seen):
                return True
        return False

    def _after(self, point: cst.CSTNode, direct: bool, node: cst.CSTNode, depth: int = 0) -> bool:
        """Whether ``node`` runs after the override at ``point``, as far as the file shows."""
        here = self.source.enclosing_function(point)
        there = self.source.enclosing_function(node)
        if here is there:
            return self.source.line(node) > self.source.line(point)
        if here is None:
            return there is not None  # functions run after the module-level code that defines them
        if there is None:
            return False
        if direct:  # builtins.print = print_pass in main_worker(): the functions it calls afterwards
            return self._called_after(point, here, there, set())
        inside = [s for s in self.call_sites(here) if self.source.enclosing_function(s) is there]
        if inside:
            return self.source.line(node) > min(self.source.line(s) for s in inside)
        callers = self.call_sites(there)
        if depth < 2 and callers and not any(self._after(point, direct, c, depth + 1) for c in callers):
            return False  # every call of node's function comes before the override
        return True
