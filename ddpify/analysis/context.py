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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.callers import Callers, Key, first_on_the_way, uncalled
from ddpify.analysis.decorators import decorated_ranks, decorator_ranks
from ddpify.analysis.distributed_code import uses_torch_distributed
from ddpify.analysis.divergence import Divergence, Divergent
from ddpify.analysis.fixpoint import Fixpoint
from ddpify.analysis.main_guards import MainGuards, is_name_test
from ddpify.analysis.rank_tests import RankTests
from ddpify.analysis.ranks import DISTRIBUTED, EVERY, FLAGS, LEAD, MAIN, NOWHERE, Branch, Ranks, RankSelection
from ddpify.analysis.source import Source

if TYPE_CHECKING:
    from ddpify.analysis.dataflow import DataFlow

_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
_EXIT_CALLS = frozenset({"sys.exit", "builtins.exit", "builtins.quit", "os._exit"})


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
    return isinstance(node, cst.If) and is_name_test(node.test)


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
        self._continues: dict[cst.If, Ranks] = {}
        self._decorators: dict[cst.FunctionDef, Ranks | None] = {}
        self._decorations: dict[cst.FunctionDef, Ranks] = {}
        self._elsewhere: dict[cst.FunctionDef, Ranks | None] = {}  # where importers call a method this file never calls

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
        if ranks == NOWHERE:  # true in no process: `if wrap_tqdm:` of a parameter no caller passes
            return EVERY if negated else NOWHERE
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
        """Where the code after ``statement`` runs: ``if rank != 0: return`` lets main through,
        and so does an exit nested in another test (``if distributed: ... if rank == 0: ...
        else: return``: the single process and rank 0 go on). Once per statement."""
        if not isinstance(statement, cst.If):
            return EVERY
        found = self._continues.get(statement)
        if found is None:
            body = self._goes_on(statement.body)
            orelse = statement.orelse
            other = EVERY if orelse is None else self._goes_on(orelse.body) if isinstance(orelse, cst.Else) else self._after_exit(orelse)
            if body == NOWHERE and self._mode_exit(statement.test):
                body = EVERY
            if body == other:
                found = body
            else:
                found = (self._test(statement.test) & body) | (self._test(statement.test, negated=True) & other)
            self._continues[statement] = found
        return found

    def _goes_on(self, suite: cst.BaseSuite) -> Ranks:
        """Where control leaves ``suite`` at its end (nowhere for a block that always exits)."""
        if self._exits(suite):
            return NOWHERE
        found = EVERY
        for statement in suite.body if isinstance(suite, cst.IndentedBlock) else ():
            found = found & self._after_exit(statement)
        return found

    def _mode_exit(self, test: cst.BaseExpression) -> bool:
        """``if rank == 0 and args.test_only: ... return``: the main rank leaves in a mode of the
        run (the test holds on no rank for certain, and only on the main ranks). In the runs
        that reach the code after it without that mode, every rank does. (``if rank != 0 and
        not args.x: return`` lets only the main rank through in its mode: the rest is its work.)"""
        ranks = self.rank_tests.ranks(test)
        may = ranks.may & DISTRIBUTED
        return ranks.must & DISTRIBUTED == 0 and may != 0 and may & ~(MAIN | LEAD) == 0

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
        processes as it is started (the project cannot import it to call it), or when it is a
        nested function nothing names. Code reached only
        from a cycle with no way in that the file shows runs anywhere (unknown)."""
        nested = self.source.enclosing_function(function) is not None  # reachable through its name only
        if (nested or self._starts_at_import or self._script_nobody_imports) and uncalled(self._callers, function):
            return NOWHERE
        found = self._where(function)
        return found if found.may else EVERY

    @functools.cached_property
    def _starts_at_import(self) -> bool:
        """Module-level code outside the ``__main__`` block joins a process group or spawns."""
        calls = [*self.source.calls_by_callee.get("init_process_group", []), *self.source.process_starts]
        return any(self.source.enclosing_function(c) is None and not self.under_main_guard(c) for c in calls)

    @functools.cached_property
    def _script_nobody_imports(self) -> bool:
        """A script (it has a ``__main__`` block, in any spelling ``main_guards`` knows) that no
        file of its project imports: a function it never calls is dead code (CLIP-Driven's
        ``validation``, the Annotated Transformer's commented-out examples)."""
        guarded = any(isinstance(s, cst.If) and self.main_guards.is_test(s.test) for s in self.source.module.body)
        return guarded and not self.source.project.imported_elsewhere

    @functools.cached_property
    def _callers(self) -> Callers:
        return Callers(self.source, mentions=True)

    @functools.cached_property
    def _distributed_file(self) -> bool:
        return uses_torch_distributed(self.source.module.code)

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
                return self._decorated(key)
            if not self._callers.called(key):
                return self._called_elsewhere(key, at) & self._decorated(key)
            name = self._callers.method_name(key)
            if name is not None:
                found = where(name)
        for site in self._callers.sites(key):
            if found == EVERY:
                break
            found = found | at(site)
        return found & self._decorated(key) if isinstance(key, cst.FunctionDef) else found

    def _called_elsewhere(self, function: cst.FunctionDef, at: Callable[[cst.CSTNode], Ranks]) -> Ranks:
        """Where a method or module function this file never calls runs: where the project files
        importing it call it (``self._save_checkpoint(...)`` of a subclass in another file, under
        a rank test; ``do_inference(...)`` of a one-process test script), else where it is defined."""
        method = self.source.is_method(function)
        # a module function: only in a file of a distributed run (a single-GPU module being
        # converted is called by single-GPU scripts, which says nothing of the converted run)
        if method or (self.source.enclosing_function(function) is None and self._distributed_file):
            if function not in self._elsewhere:
                self._elsewhere[function] = self.source.project.called_elsewhere(function.name.value, function=not method)
            found = self._elsewhere[function]
            if found is not None:
                return found & at(function)
        return at(function)

    def _decorated(self, function: cst.FunctionDef) -> Ranks:
        """Where ``function``'s decorators let it run, judged once per function (the fixpoint
        asks at every pass)."""
        if function not in self._decorations:
            self._decorations[function] = decorated_ranks(self.source, self.decorator, function)
        return self._decorations[function]

    def decorator(self, function: cst.FunctionDef) -> Ranks | None:
        """Where ``function``, used as a decorator, lets what it wraps run (None: anywhere)."""
        if function not in self._decorators:
            self._decorators[function] = decorator_ranks(self.source, self.local, function)
        return self._decorators[function]

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
        """Inside ``if __name__ == "__main__":``, or another test only the launched process
        passes (``ddpify.analysis.main_guards``)."""
        return self.main_guards.guards(node)

    @functools.cached_property
    def main_guards(self) -> MainGuards:
        return MainGuards(self.source)

    # ---------------------------------------------------------------- processes
    @functools.cached_property
    def workers(self) -> set[cst.FunctionDef]:
        """Functions a spawned worker runs: the spawn targets and what they call, transitively."""
        return self.reachable(list(self.source.spawned))

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
        handed = list(self.main_guards.launched_only)  # show_example(example_mask): run behind `__name__ == "__main__"`
        return self.reachable(top + spawning + self._callers_of(spawning) + handed) - self.workers

    def _callers_of(self, functions: list[cst.FunctionDef]) -> list[cst.FunctionDef]:
        """The functions that call ``functions``, transitively (CogDL's ``Trainer.run`` calling
        ``self.dist_train``, which starts the workers): they run in the launching process."""
        found: dict[Key, None] = {}
        todo: list[Key] = list(functions)
        while todo:
            key = todo.pop()
            for frame in self._callers.frames(key):
                if frame not in found:
                    found[frame] = None
                    todo.append(frame)
        return [key for key in found if isinstance(key, cst.FunctionDef)]

    def reachable(self, start: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
        """``start`` and the functions of this file they call, transitively."""
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
