"""Conditions the ranks may decide differently: the one definition of "rank-uniform".

A collective (a barrier, DDP's all-reduce) hangs when some ranks reach it and others do not. Whether they all
do depends on the conditions on the way: a condition is **uniform** when every rank computes the same value --
constants, arguments and configuration, loop counters over ranges, epoch and step counts, model parameters (DDP
keeps them equal), metrics over data every rank sees whole, values reduced across ranks (``dist.all_reduce``,
``reduce_*()`` helpers). It is **divergent** when it reaches

- the clock (``time.time()``, ``datetime.now()``: ranks start and run apart),
- random numbers (``torch.randint``, ``random.random()``, ``np.random.*``: ddpify seeds each
  rank differently once training starts),
- the rank (``rank == 0``, ``f"{rank}"``),
- per-rank data: the batches of a training loader (sharded: each rank sees its own part) and
  everything computed from them (the loss, a running accuracy, ``loss.item() < best``).

Values are followed through assignments (also ``self.`` attributes and module variables, and every assignment
under an ``if`` follows its test: ``bad += 1`` in the ``else`` of ``if loss < best:``), the returns of this
file's functions and their parameters, flow-insensitively (a variable once assigned a divergent value is
divergent everywhere in its scope), until nothing changes. The enclosing decisions of a statement are its
``if`` / ``elif`` / ``while`` tests, conditional expressions, ``and`` / ``or``, the loops that run it (a
per-rank number of times), the early exits above it (``if loss > x: continue``), ``except`` handlers (only the
ranks that raise run them), and the same at every call site of its function, transitively.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis import loop_locals, reads
from ddpify.analysis.batch_calls import counts
from ddpify.analysis.callers import CalleeKey, Callees, Callers, first_on_the_way
from ddpify.analysis.dataflow import DataFlow, Role
from ddpify.analysis.fixpoint import Fixpoint
from ddpify.analysis.reads import CLOCK, COLLECTIVES, MUTATORS, RANDOM_METHODS, draws, exits, loop_items, paired, parts, short, targets
from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code, is_simple_reference, parameter_names

if TYPE_CHECKING:
    from ddpify.analysis.rank_tests import RankTests

Scope = cst.CSTNode  # a FunctionDef, a ClassDef (for self.x), or the Module
Key = tuple[Scope, str]
# target, value (an expression, or the key of a method name's argument slot), the value's scope
_Edge = tuple["Key | None", "cst.BaseExpression | Key", Scope]


@dataclass(frozen=True)
class Divergent:
    """A decision on the way to a statement that ranks may take differently: ``node`` is the
    test (or the ``except`` handler, or the loop), ``kind`` one of ``clock`` / ``random`` /
    ``rank`` / ``data`` / ``exception``, ``reason`` says why in words."""

    node: cst.CSTNode
    kind: str
    reason: str
    line: int

    @property
    def text(self) -> str:
        """The decision as written (``if acc > best_acc``), for messages."""
        if isinstance(self.node, cst.ExceptHandler):
            return "except" + (f" {code(self.node.type)}" if self.node.type is not None else "")
        if isinstance(self.node, cst.For):
            return f"for ... in {code(self.node.iter)}"
        return code(self.node)


@dataclass(frozen=True)
class _Why:
    kind: str
    reason: str


class Divergence:
    """Divergent values and decisions of one file, computed on first use."""

    def __init__(self, source: Source, rank_tests: RankTests, dataflow: Callable[[], DataFlow]) -> None:
        self.source = source
        self.rank_tests = rank_tests
        self._dataflow = dataflow
        self._decisions: dict[cst.CSTNode, Divergent | None] = {}
        self._exits_before: dict[cst.CSTNode, dict[cst.CSTNode, Divergent | None]] = {}
        self._atom_cache: dict[tuple[cst.CSTNode, Scope], list[tuple[_Why | None, list[Key]]]] = {}
        self._reduced_values: set[cst.CSTNode] = set()  # averaged over the ranks by the conversion

    def assume_reduced(self, values: Iterable[cst.CSTNode]) -> None:
        """``values`` will be the same on every rank (``ddpify.mean_over_ranks``); earlier answers are forgotten."""
        self._reduced_values.update(values)
        self.__dict__.pop("tainted", None)
        self.__dict__.pop("_decision_at_entry", None)
        self._decisions.clear()
        self._exits_before.clear()

    # ---------------------------------------------------------------- the answers
    def why(self, expression: cst.BaseExpression) -> _Why | None:
        """Why ``expression`` may differ between ranks, or None when every rank computes it alike."""
        found = self._expression(expression, self._scope_of(expression), self.tainted)
        if found is None and self.rank_tests.depends_on_rank(expression):
            return _Why("rank", f"`{short(expression)}` depends on the rank")
        return found

    def uniform(self, expression: cst.BaseExpression) -> bool:
        return self.why(expression) is None

    def count_why(self, loop: cst.For | cst.While) -> _Why | None:
        """Why ranks may run ``loop`` a different number of times: a ``while`` test, or the
        bound of a counting ``for`` (``range(int(time.time()) % 3)``). A loop over data runs
        alike everywhere, however its items differ: every rank's shard, and a permutation of a
        fixed-size set, has the same length."""
        if isinstance(loop, cst.While):
            return self.why(loop.test)
        return self.why(loop.iter) if counts(self.source, loop.iter) else None

    def decision(self, node: cst.CSTNode) -> Divergent | None:
        """The innermost decision on the way to ``node`` (here, or at a call site of its function,
        transitively) that ranks may take differently; None when every rank reaches it alike."""
        child = node
        for parent in self.source.ancestors(node):
            if isinstance(parent, cst.FunctionDef):
                return self._decision_at_entry(parent)
            if isinstance(parent, (cst.ClassDef, cst.Lambda)):
                return None
            found = self._step(child, parent)
            if found is not None:
                return found
            child = parent
        return None

    # ---------------------------------------------------------------- decisions
    @functools.cached_property
    def _callers(self) -> Callers:
        return Callers(self.source, mentions=False)

    @functools.cached_property
    def _decision_at_entry(self) -> Callable[[cst.FunctionDef], Divergent | None]:
        """The innermost divergent decision at a call site of each function, transitively."""
        return first_on_the_way(self._callers, self._local_decision, self.source.budget)

    def _local_decision(self, node: cst.CSTNode) -> Divergent | None:
        child = node
        for parent in self.source.ancestors(node):
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            found = self._step(child, parent)
            if found is not None:
                return found
            child = parent
        return None

    def _step(self, child: cst.CSTNode, parent: cst.CSTNode) -> Divergent | None:
        if child in self._decisions:
            return self._decisions[child]
        found: Divergent | None = None
        if isinstance(parent, (cst.If, cst.IfExp)) and child in (parent.body, parent.orelse):
            found = self._test(parent.test)
        elif isinstance(parent, cst.While) and child is parent.body:
            found = self._test(parent.test)
        elif isinstance(parent, cst.BooleanOperation) and child is parent.right:
            found = self._test(parent.left)
        elif isinstance(parent, cst.For) and child is parent.body:
            why = self.count_why(parent)
            if why is not None:
                found = Divergent(parent, why.kind, f"it loops a per-rank number of times: {why.reason}", self.source.line(parent))
        elif isinstance(parent, cst.ExceptHandler) and child is parent.body:
            found = Divergent(parent, "exception", "only the ranks where the try block raises run it", self.source.line(parent))
        elif isinstance(parent, (cst.IndentedBlock, cst.Module)):
            found = self._early_exit(parent, child)
        self._decisions[child] = found
        return found

    def _test(self, test: cst.BaseExpression) -> Divergent | None:
        why = self.why(test)
        return Divergent(test, why.kind, why.reason, self.source.line(test)) if why is not None else None

    def _early_exit(self, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode) -> Divergent | None:
        """``if loss.item() > limit: continue`` above ``child``: the ranks that leave skip it."""
        if block not in self._exits_before:  # one pass for all the block's statements (a module of 600 classes)
            found, last = self._exits_before.setdefault(block, {}), None
            for statement in block.body:
                found[statement] = last
                if isinstance(statement, cst.If) and (
                    exits(statement.body) or isinstance(statement.orelse, cst.Else) and exits(statement.orelse.body)
                ):
                    last = self._test(statement.test) or last
        return self._exits_before[block].get(child)

    # ---------------------------------------------------------------- values
    def _expression(self, expression: cst.BaseExpression, scope: Scope, tainted: dict[Key, _Why]) -> _Why | None:
        for why, keys in self._atoms(expression, scope):
            if why is not None:
                return why
            for key in keys:
                found = tainted.get(key)
                if found is not None:
                    return found
        return None

    def _atoms(self, expression: cst.BaseExpression, scope: Scope) -> list[tuple[_Why | None, list[Key]]]:
        """What ``expression`` reads, worked out once: per call, its own reason to differ (the
        clock, a random draw) and the returns of this file's functions it runs; per reference,
        where it lives."""
        found = self._atom_cache.get((expression, scope))
        if found is None:
            found = []
            for node in parts(expression, self.source):
                if isinstance(node, cst.Call):
                    found.append((self._call(node), [self._return_key(k) for k in self._callees.of_call(node)]))
                else:
                    key = self._comprehension_key(node) or self._fresh_key(node, code(node)) or self._key(code(node), scope)
                    if key is not None:
                        found.append((None, [key]))
            self._atom_cache[(expression, scope)] = found
        return found

    def _call(self, call: cst.Call) -> _Why | None:
        """A call whose value differs between ranks whatever its arguments: the clock, a draw."""
        qualified = self.source.qualified(call)
        text = f"{short(call.func)}()"
        if qualified & CLOCK:
            return _Why("clock", f"{text} reads the clock, which differs between ranks")
        drawn = any(draws(q) for q in qualified) or isinstance(call.func, cst.Attribute) and call.func.attr.value in RANDOM_METHODS
        drawn = drawn or bool((helper := self.source.project.helper(call)) and helper.draws)  # NRI's gumbel_softmax() of utils.py
        if drawn and self._during_training(call):
            return _Why("random", f"{text} draws random numbers while training runs, when each rank has its own seed")
        return None

    def _during_training(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` runs once training has started (on the training path, or in a
        function called from there): before that, every rank draws the same numbers (ddpify
        seeds the ranks apart only when training data starts flowing), so a dataset generated
        or a model initialised at random is the same everywhere."""
        if self._started_here(node):
            return True
        function = self.source.enclosing_function(node)
        return function is not None and bool(self._training_caller(function))

    def _started_here(self, node: cst.CSTNode) -> bool | None:
        """On the training path, or in a loop that trains, within its own function."""
        if self._dataflow().on_training_path(node):
            return True
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(ancestor, (cst.For, cst.While)) and self.trains(ancestor):
                return True
        return None

    @functools.cached_property
    def _training_caller(self) -> Callable[[cst.FunctionDef], bool | None]:
        """Whether some call of each function, transitively, runs once training has started."""
        return first_on_the_way(self._callers, self._started_here, self.source.budget)

    def trains(self, node: cst.CSTNode) -> bool:
        """``node`` (a loop or a function) runs a ``.backward()``, itself or through this file's
        functions or a project function or method that trains (``Helper.trains``): with DDP,
        every pass of it all-reduces gradients with the other ranks."""
        if isinstance(node, cst.FunctionDef):
            return self._training_function(node)
        return self._backward_or_training_call(node, self._training_function)

    @functools.cached_property
    def _callees(self) -> Callees:
        return Callees(self.source)

    @functools.cached_property
    def _training_function(self) -> Fixpoint[CalleeKey, bool]:
        """Which functions (and method names) run a backward, solved once over the callees."""
        callees = self._callees

        def transfer(key: CalleeKey, trains: Callable[[CalleeKey], bool]) -> bool:
            if isinstance(key, str):
                return any(trains(m) for m in callees.methods(key))
            return self._backward_or_training_call(key, trains)

        return Fixpoint(callees.dependencies, transfer, False, self.source.budget)

    def _backward_or_training_call(self, node: cst.CSTNode, trains: Callable[[CalleeKey], bool]) -> bool:
        for call in self.source.of_types_in(node, cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
                return True
            if any(trains(k) for k in self._callees.of_call(call)):
                return True
            if not self._callees.of_call(call) and (helper := self.source.project_call(call)) is not None and helper.trains:
                return True  # the project's training step: `trainer.discriminator_trainstep(x, y, z)`
        return False

    def _key(self, text: str, scope: Scope) -> Key | None:
        """Where a reference (``x``, ``self.best``, ``args.lr``) lives: the innermost function
        that binds its root name, the class for ``self.x``, else the module."""
        root = text.split(".", 1)[0]
        current: cst.CSTNode | None = scope
        if root in ("self", "cls") and "." in text:
            klass = self.source.enclosing_class(scope) if not isinstance(scope, cst.ClassDef) else scope
            return (klass, text) if klass is not None else None
        while isinstance(current, cst.FunctionDef):
            if root in self._bound[current]:
                return (current, text)
            current = self.source.enclosing_function(current)
        return (self.source.module, text)

    def _comprehension_key(self, node: cst.CSTNode) -> Key | None:
        """``x`` of ``sum(f(x) for x, y in valid_loader)`` lives in the comprehension, not in
        the function whose loop over the training loader also binds an ``x``."""
        comprehension = reads.binding_comprehension(self.source, node)
        return (comprehension, code(node)) if comprehension is not None else None

    def _comprehensions(self) -> list[_Edge]:
        """A comprehension's targets take (part of) what their ``for`` iterates; so do a loop's;
        what a loop leaves in a name its passes bind afresh flows on to the code after it."""
        found: list[_Edge] = [((c, name), iterated, self._scope_of(c)) for c, name, iterated in reads.comprehension_bindings(self.source)]
        found += [((loop, name), iterated, self._scope_of(loop)) for loop, name, iterated in reads.loop_bindings(self.source)]
        exits = [(loop, name, self._scope_of(loop), outer) for loop, name, outer in loop_locals.loop_exits(self.source)]
        return found + [((outer, name) if outer else self._key(name, scope), (loop, name), scope) for loop, name, scope, outer in exits]

    def _fresh_key(self, node: cst.CSTNode | None, name: str) -> Key | None:
        """``(loop, name)`` at ``node`` in a loop whose passes bind ``name`` afresh (the ``x`` of
        ``for x, y in val_loader:``, an ``out = model(x)`` there: ``ddpify.analysis.loop_locals``)."""
        loop = loop_locals.local_loop(self.source, node, name) if node is not None and "." not in name else None
        return (loop, name) if loop is not None else None

    def _scope_of(self, node: cst.CSTNode) -> Scope:
        return self.source.enclosing_function(node) or self.source.module

    # ---------------------------------------------------------------- the fixpoint
    @functools.cached_property
    def _bound(self) -> dict[cst.FunctionDef, set[str]]:
        """Root names each function binds (parameters, assignment and loop targets)."""
        found: dict[cst.FunctionDef, set[str]] = {}
        for function in self.source.of_types(cst.FunctionDef):
            assert isinstance(function, cst.FunctionDef)
            found[function] = parameter_names(function.params)
        for target, _, scope, _ in self._edges:
            if isinstance(scope, cst.FunctionDef) and "." not in target:
                found[scope].add(target)
        return found

    @functools.cached_property
    def _edges(self) -> list[tuple[str, cst.BaseExpression, Scope, cst.CSTNode]]:
        """``(target, value, scope, site)``: ``target`` takes (part of) ``value``, evaluated in ``scope``, at ``site``."""
        edges: list[tuple[str, cst.BaseExpression, Scope, cst.CSTNode]] = []
        for node in self.source.of_types(cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.WithItem):
            scope = self._scope_of(node)
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]]
            if isinstance(node, cst.Assign):
                pairs = [pair for t in node.targets for pair in paired(t.target, node.value)]
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
                pairs = [(node.target, node.value)] if node.value is not None else []
            elif isinstance(node, cst.For):
                pairs = [(t, node.iter) for t in loop_items(node)]
            else:
                assert isinstance(node, cst.WithItem)
                pairs = [(node.asname.name, node.item)] if node.asname is not None else []
            for target, value in pairs:
                edges.extend((name, value, scope, node) for name in targets(target))
        for name in MUTATORS:
            for call in self.source.calls_by_callee.get(name, []):
                if isinstance(call.func, cst.Attribute) and is_simple_reference(call.func.value):
                    edges.extend((code(call.func.value), arg.value, self._scope_of(call), call) for arg in call.args)
        for call in self.source.calls_by_callee.get("shuffle", []):  # np.random.shuffle(order): in place
            if call.args and is_simple_reference(call.args[0].value) and any(draws(q) for q in self.source.qualified(call)):
                edges.append((code(call.args[0].value), call, self._scope_of(call), call))
        for branch in self.source.of_types(cst.If):  # `if loss < best: bad = 0 else: bad += 1`: bad follows the test
            assert isinstance(branch, cst.If)
            for statement in self.source.of_types_in(branch, cst.Assign, cst.AugAssign):
                if self.source.enclosing_function(statement) is self.source.enclosing_function(branch):
                    found = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]  # type: ignore[attr-defined]
                    edges.extend((name, branch.test, self._scope_of(statement), statement) for t in found for name in targets(t))
        return edges

    @functools.cached_property
    def tainted(self) -> dict[Key, _Why]:
        """Every divergent variable, attribute, parameter and function return of the file: a
        worklist over the edges, each edge looked at again only when a key it reads turns
        divergent (linear in the edges)."""
        tainted: dict[Key, _Why] = {}
        # rank dependence is not followed here: a rank test is the context's (``Context.ranks``),
        # and ``why`` asks ``RankTests.depends_on_rank`` of the test itself, one assignment deep
        own = [(self._fresh_key(n, t) or self._key(t, s), v, s) for t, v, s, n in self._edges]
        edges = own + self._comprehensions() + self._returns() + self._arguments()
        readers: dict[Key, list[int]] = {}
        queue: list[Key] = []

        def taint(key: Key, why: _Why) -> None:
            if key not in tainted:
                tainted[key] = why
                queue.append(key)

        for root, reason in self._roots():
            taint(root, reason)
        for index, (target, value, scope) in enumerate(edges):
            if target is None or value in self._reduced_values:
                continue
            if isinstance(value, tuple):  # a parameter fed by a method name's arguments
                readers.setdefault(value, []).append(index)
                continue
            for cause, keys in self._atoms(value, scope):
                if cause is not None:
                    taint(target, cause)
                for read in keys:
                    readers.setdefault(read, []).append(index)
        while queue:
            read = queue.pop()
            self.source.budget.spend(1)
            for index in readers.get(read, ()):
                target, value, scope = edges[index]
                if target is not None and target not in tainted:
                    found = tainted[value] if isinstance(value, tuple) else self._expression(value, scope, tainted)
                    if found is not None:
                        taint(target, found)
        for key in self._reduced():
            tainted.pop(key, None)
        return tainted

    def _returns(self) -> list[_Edge]:
        """A function of this file returns (or yields) what its ``return`` statements give."""
        found: list[_Edge] = []
        for function in self.source.of_types(cst.FunctionDef):
            for node in self.source.of_types_in(function, cst.Return, cst.Yield):
                value = getattr(node, "value", None)
                if isinstance(value, cst.BaseExpression) and self.source.enclosing_function(node) is function:
                    found.append(((function, "<return>"), value, function))
            if self.source.enclosing_class(function) is not None:
                found.append((self._return_key(function.name.value), (function, "<return>"), function))
        return found

    def _return_key(self, callee: CalleeKey) -> Key:
        """What a call returns: its function's return, or every same-named method's."""
        return (self.source.module, f"<{callee} return>") if isinstance(callee, str) else (callee, "<return>")

    def _arguments(self) -> list[_Edge]:
        """A parameter of this file's function takes each argument its call sites pass. A
        method's calls (``x.get(a)``) feed the method name's argument slots (``("get", 0)``),
        which feed the parameters of every method of that name: edges linear in the program."""
        found: list[_Edge] = []
        module = self.source.module
        for name, calls in self.source.calls_by_callee.items():
            for call in calls:
                if isinstance(call.func, cst.Attribute) and self._callees.methods(name):
                    for slot, arg in reads.argument_slots(call):
                        found.append(((module, f"<{name} argument {slot}>"), arg.value, self._scope_of(call)))
        for function in self.source.of_types(cst.FunctionDef):
            params = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
            if self.source.enclosing_class(function) is not None:
                params = params[1:]
                name = function.name.value
                for index, param in enumerate(params):
                    for slot in (str(index), param):
                        found.append(((function, param), (module, f"<{name} argument {slot}>"), function))
                continue
            for call in self.source.call_sites(function):
                for slot, arg in reads.argument_slots(call):
                    filled = slot if not slot.isdigit() else params[int(slot)] if int(slot) < len(params) else None
                    if filled is not None:
                        found.append(((function, filled), arg.value, self._scope_of(call)))
        return found

    def _roots(self) -> Iterator[tuple[Key, _Why]]:
        """The batches of sharded sources: what the loops over them (or ``x = next(it)``) bind."""
        for batch_source in self._dataflow().sources:
            if batch_source.role is not Role.TRAIN:
                continue
            name = batch_source.names[0] if batch_source.names else short(batch_source.node)
            why = _Why("data", f"it is computed from the batches of {name}, which each rank draws from its own shard")
            for consumer in batch_source.consumers:
                node, statement = consumer.node, self.source.parent(consumer.node)
                if isinstance(node, cst.For):
                    if counts(self.source, node.iter):
                        continue  # `for i in range(n): x = get_batch()`: the batch is followed from there
                    bound, scope = loop_items(node), self._scope_of(node)
                elif isinstance(statement, cst.Assign):
                    bound, scope = [t.target for t in statement.targets], self._scope_of(statement)
                else:
                    continue
                for key in (k for t in bound for n in targets(t) for k in (self._key(n, scope), self._fresh_key(statement, n))):
                    if key is not None:
                        yield key, why
                if isinstance(node, cst.For):  # the loop's own items (``_loop_key``)
                    yield from (((node, n), why) for t in bound for n in targets(t))

    def _reduced(self) -> list[Key]:
        """Tensors given to a collective (``dist.all_reduce(correct)``): the same on every rank
        afterwards (followed flow-insensitively, as everything here)."""
        found: list[Key] = []
        for name in COLLECTIVES:
            for call in self.source.calls_by_callee.get(name, []):
                if not any(q.startswith("torch.distributed") for q in self.source.qualified(call)):
                    continue
                for arg in call.args[:1]:
                    if is_simple_reference(arg.value):
                        key = self._key(code(arg.value), self._scope_of(call))
                        found += [k for k in (key, self._fresh_key(call, code(arg.value))) if k is not None]
        return found


# ---------------------------------------------------------------- helpers
