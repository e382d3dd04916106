"""What one batch does once it is taken: does a value computed from it reach ``.backward()`` (training), is it
used under ``torch.no_grad()`` / ``torch.inference_mode()`` or after ``model.eval()`` (evaluation), is it used
as an index into data, returned or yielded?

The answer comes from one walk over the statements that follow the batch (a loop body, or a function body from
the batch on), marking every name assigned from a marked value, and entering the file's own functions that
receive a marked value (each function once per set of marked parameters; their own loops over other data are
runs of their own, not entered). Branches whose test a known key decides (``if phase == "train":`` for the
``"train"`` loader) are skipped; the calls that make, pass on and take batches are in ``batch_calls``. A batch
handed to a function or method of the project's own modules that trains (``steps.disc_step(real, z)``) reaches a
training step. A name the batch reaches only under ``torch.no_grad()`` holds no autograd graph: a ``.backward()`` of
that name (the flow is followed by name, not by binding) differentiates another value, not this batch's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst

from ddpify.analysis.batch_calls import counts, loader_inner
from ddpify.analysis.callgraph import literal
from ddpify.analysis.source import Source
from ddpify.analysis.values import Values
from ddpify.tree import cstutil

NO_GRAD = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)
SET_GRAD = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"})
Constants = Mapping[str, str | int]


@dataclass(frozen=True)
class Reach:
    """Where the batch got: the first ``backward()`` call it reaches, whether it indexes data
    (``data[ix]``), whether it is returned, the ``no_grad`` block it is used under, the file's
    functions it was handed to, and whether it is yielded (the generator passes it on)."""

    backward: cst.Call | None = None
    indexes: bool = False
    returns: bool = False
    no_grad: cst.With | None = None
    functions: tuple[cst.FunctionDef, ...] = ()
    yields: bool = False


class Batches:
    """Batch walks and gradient contexts of one file (cached per function)."""

    def __init__(self, values: Values) -> None:
        self.values = values
        self.source = values.source
        self._functions: dict[tuple[cst.FunctionDef, frozenset[str]], Reach] = {}
        self._modes: dict[cst.CSTNode, list[tuple[int, cst.Call, bool]]] | None = None

    def reach(
        self,
        statements: Sequence[cst.CSTNode],
        names: frozenset[str] = frozenset(),
        seeds: Sequence[cst.CSTNode] = (),
        constants: Constants | None = None,
        entry: frozenset[str] | None = None,
    ) -> Reach:
        """Follow the batch held by ``names`` (or produced by the ``seeds`` expressions)
        through ``statements``. ``entry``: the parameters a function was given the batch in;
        its loops over other data (not counting loops, not naming those parameters) are its own
        training runs, not steps on this batch, and are not entered."""
        walk = _Walk(self, set(names), [self.values.start(s) for s in seeds], constants or {}, entry)
        walk.statements(statements)
        return walk.result()

    def function_reach(self, function: cst.FunctionDef, params: frozenset[str]) -> Reach:
        """``function`` run with batch values in ``params``."""
        key = (function, params)
        found = self._functions.get(key)
        if found is None:
            self._functions[key] = Reach()  # recursion answers "nothing more"
            found = self._functions[key] = self.reach(_body(function.body), params, entry=params)
        return found

    # ------------------------------------------------------------------ gradient context
    def disables_grad(self, expression: cst.BaseExpression, constants: Constants | None = None) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()``, ``@torch.no_grad``,
        ``torch.set_grad_enabled(False)`` (or a test a known key makes false)."""
        call = expression if isinstance(expression, cst.Call) else None
        names = self.source.qualified(call.func if call is not None else expression)
        if names & NO_GRAD:
            first = call.args[0].value if call is not None and call.args else None
            return not (isinstance(first, cst.Name) and first.value == "False")
        if names & SET_GRAD and call is not None and call.args:
            value = call.args[0].value
            return (isinstance(value, cst.Name) and value.value == "False") or static_truth(value, constants or {}) is False
        return False

    def argument_without_grad(self, node: cst.CSTNode) -> str | None:
        """``model(next(val_loader))`` inside ``with torch.no_grad():``: the batch is taken as an
        argument (no name keeps it for later), so everything computed from it has no gradient
        and no backward can train on it; a name the flow follows later (a reused ``loss``) does
        not change that. Why (evidence), else None."""
        if not isinstance(node, cst.Call) or not isinstance(self.source.parent(node), cst.Arg):
            return None
        return self.no_grad_around(node)

    def no_grad_around(self, node: cst.CSTNode, constants: Constants | None = None) -> str | None:
        """Why ``node`` runs without gradients: a ``with`` block around it or a decorator of
        its function (evidence sentence), else None."""
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, cst.With):
                for item in ancestor.items:
                    if self.disables_grad(item.item, constants):
                        return f"under {cstutil.code(item.item)} at line {self.source.line(ancestor)}"
            elif isinstance(ancestor, cst.FunctionDef):
                for decorator in ancestor.decorators:
                    if self.disables_grad(decorator.decorator):
                        return f"in {ancestor.name.value}(), decorated @{cstutil.code(decorator.decorator)} at line {self.source.line(decorator)}"
                return None
            elif isinstance(ancestor, cst.ClassDef):
                return None
        return None

    def eval_before(self, node: cst.CSTNode, receivers: Collection[str] = ()) -> str | None:
        """``model.eval()`` (or ``.train(False)``) is the last mode switch before ``node`` in
        its function: evidence sentence, else None. ``receivers``: the spellings of the model
        ``node`` runs, when known; then only its own switches count (``teacher.eval()`` in a
        distillation loop does not make the student's forward an evaluation)."""
        position = self.values.start(node)
        last: tuple[cst.Call, bool] | None = None
        for start, call, evaluates in self.modes().get(self.values.frame_of(node), []):
            if start >= position:
                break
            if receivers and isinstance(call.func, cst.Attribute) and cstutil.code(call.func.value) not in receivers:
                continue
            last = (call, evaluates)
        if last is not None and last[1]:
            return f"after {cstutil.code(last[0])} at line {self.source.line(last[0])}"
        return None

    def modes(self) -> dict[cst.CSTNode, list[tuple[int, cst.Call, bool]]]:
        """Per function: its ``.eval()`` / ``.train()`` calls in order, True for eval."""
        if self._modes is None:
            found: dict[cst.CSTNode, list[tuple[int, cst.Call, bool]]] = {}
            calls = self.source.calls_by_callee
            for call in [*calls.get("eval", []), *calls.get("train", [])]:
                if not isinstance(call.func, cst.Attribute) or self.values.callees(call) or len(call.args) > 1:
                    continue
                flag = call.args[0].value if call.args else None
                evaluates = call.func.attr.value == "eval" or (isinstance(flag, cst.Name) and flag.value == "False")
                if call.func.attr.value == "eval" and call.args:
                    continue
                found.setdefault(self.values.frame_of(call), []).append((self.values.start(call), call, evaluates))
            for events in found.values():
                events.sort(key=lambda event: event[0])
            self._modes = found
        return self._modes

    def context(self, sites: Sequence[cst.CSTNode], constants: Constants | None = None, end: cst.CSTNode | None = None) -> str | None:
        """Why the batches used at ``sites`` (the loop, then the calls that led to it, inner
        first) are evaluated: no_grad/inference_mode around any of them, ``.eval()`` before
        any of them (or before ``end``, the last statement that uses them), or a function that
        every caller calls under no_grad."""
        for site in sites:
            why = self.no_grad_around(site, constants)
            if why is not None:
                return why
        for site in [*sites, *([end] if end is not None else [])]:
            why = self.eval_before(site)
            if why is not None:
                return why
        function = self.source.enclosing_function(sites[-1]) if sites else None
        callers = self.values.callers(function) if function is not None else []
        reasons = [self.no_grad_around(call) for call, _ in callers]
        if reasons and all(reasons):
            return f"{function.name.value}() is only called {reasons[0]}"  # type: ignore[union-attr]
        return None


@dataclass
class _Walk:
    """One walk (see the module docstring)."""

    batches: Batches
    tainted: set[str]
    seeds: list[int]
    constants: Constants
    entry: frozenset[str] | None = None
    backward: cst.Call | None = None
    indexes: bool = False
    returns: bool = False
    yields: bool = False
    no_grad: cst.With | None = None
    functions: list[cst.FunctionDef] = field(default_factory=list)
    hits: int = 0
    dotted: bool = False
    gradless: set[str] = field(default_factory=set)  # marked only by assignments under no_grad
    graded: set[str] = field(default_factory=set)  # marked by an assignment with gradients on

    def result(self) -> Reach:
        return Reach(self.backward, self.indexes, self.returns, self.no_grad, tuple(dict.fromkeys(self.functions)), self.yields)

    def statements(self, statements: Sequence[cst.CSTNode]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                self.small(small)
        elif isinstance(node, cst.If):
            self.expression(node.test)
            truth = static_truth(node.test, self.constants)
            if truth is not False:
                self.statements(_body(node.body))
            if truth is not True and node.orelse is not None:
                self.statements([node.orelse] if isinstance(node.orelse, cst.If) else _body(node.orelse.body))
        elif isinstance(node, cst.For):
            self.expression(node.iter)
            if self.entry is not None and not counts(self.batches.source, node.iter) and not self._mentions(node.iter, self.entry):
                return  # the function's own loop over other data: a run of its own, not a step on this batch
            if self.reads(node.iter):
                self.taint(node.target)
            self.statements(_body(node.body))
        elif isinstance(node, cst.While):
            self.expression(node.test)
            self.statements(_body(node.body))
        elif isinstance(node, cst.With):
            self.with_block(node)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self.statements(_body(node.body))
            for handler in node.handlers:
                self.statements(_body(handler.body))
            for extra in (node.orelse, node.finalbody):
                if extra is not None:
                    self.statements(_body(extra.body))

    def with_block(self, node: cst.With) -> None:
        off = any(self.batches.disables_grad(item.item, self.constants) for item in node.items)
        for item in node.items:
            self.expression(item.item)
            if item.asname is not None and self.reads(item.item):
                self.taint(item.asname.name)
        hits = self.hits
        self.statements(_body(node.body))
        if off and self.hits > hits and self.no_grad is None:
            self.no_grad = node

    def small(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            self.expression(node.value)
            if self.reads(node.value):
                before = set(self.tainted)
                for target in node.targets:
                    self.taint(target.target)
                self.gradless_assignment(node, self.tainted - before)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
            self.expression(node.value)
            if self.reads(node.value):
                self.taint(node.target)
        elif isinstance(node, cst.Return) and node.value is not None:
            self.expression(node.value)
            self.returns = self.returns or self.reads(node.value)
        elif isinstance(node, cst.Expr):
            self.expression(node.value)
            value = node.value
            if isinstance(value, cst.Yield) and value.value is not None:
                self.yields = self.yields or self.reads(value.value)
            elif self.seeds and (into := _collected_into(value)) is not None and self.reads(value):
                self.taint(into)  # `inputs.append(data[i])` for each drawn index: the batch, built up
            elif (into := _copied_into(value)) is not None and self.reads(value):
                self.taint(into)  # `x.copy_(images)`: the batch, in a buffer made before the loop

    def expression(self, expression: cst.BaseExpression) -> None:
        values = self.batches.values
        for call in cstutil.of_types(expression, cst.Call):
            marked = [arg for arg in call.args if self.reads(arg.value)]
            if self.backward is None and _is_backward(call) and not values.callees(call):
                receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
                if receiver is not None and cstutil.code(receiver) in self.gradless:
                    receiver = None  # a name the batch reached only under no_grad: no graph to differentiate
                if marked or (receiver is not None and self.reads(receiver)):
                    self.backward = call
            elif self.backward is None and marked and not values.callees(call) and _project_step(self.batches.source, call):
                self.backward = call
            for function, implicit in values.callees(call) if marked else ():
                params = frozenset(p.name.value for a in marked if (p := values.parameter(call, function, implicit, a)) is not None)
                if params:
                    self.merge(function, self.batches.function_reach(function, params))
        if not self.indexes:
            self.indexes = self.used_as_index(expression)

    def merge(self, function: cst.FunctionDef, reach: Reach) -> None:  # not yields: that function's own
        self.functions += [function, *reach.functions]
        self.backward = self.backward or reach.backward
        self.indexes = self.indexes or reach.indexes
        self.no_grad = self.no_grad or reach.no_grad

    def used_as_index(self, expression: cst.BaseExpression) -> bool:
        """``data[ix]``, ``data[i : i + n] for i in ix``: a marked value selects data."""
        subscripts = cstutil.of_types(expression, cst.Subscript)
        if not subscripts:
            return False
        extra = {
            n
            for comp in cstutil.of_types(expression, cst.CompFor)
            if not self._keys_of_dict(comp.iter) and self.reads(comp.iter)
            for n in _names(comp.target)
        }
        return any(self.reads(element.slice, extra) for subscript in subscripts for element in subscript.slice)

    def _keys_of_dict(self, iterated: cst.BaseExpression) -> bool:
        """``for phase in sets`` / ``sets.keys()`` where ``sets`` is only ever bound to a dict:
        the loop gets its keys (``"train"``), not the marked values inside it."""
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and iterated.func.attr.value == "keys":
            iterated = iterated.func.value
        if not isinstance(iterated, cst.Name):
            return False
        bound = self.batches.source.assignments.get(iterated.value, [])
        return bool(bound) and all(isinstance(value, (cst.Dict, cst.DictComp)) for _, value in bound)

    def reads(self, expression: cst.CSTNode, extra: set[str] | frozenset[str] = frozenset()) -> bool:
        """Whether ``expression`` reads a marked value (or is or holds a seed)."""
        hit = self._reads(expression, extra)
        self.hits += hit
        return hit

    def _reads(self, expression: cst.CSTNode, extra: set[str] | frozenset[str]) -> bool:
        values = self.batches.values
        if self.seeds:
            start, end = values.start(expression), values.end(expression)
            if any(start <= seed < end for seed in self.seeds):
                return True
        names = self.tainted | extra if extra else self.tainted
        if not names:
            return False
        parent = self.batches.source.parent
        for name in cstutil.of_types(expression, cst.Name):
            if name.value in names:
                holder = parent(name)
                if not (isinstance(holder, cst.Attribute) and holder.attr is name) and not (
                    isinstance(holder, cst.Arg) and holder.keyword is name
                ):
                    return True
        if self.dotted:
            for attribute in cstutil.of_types(expression, cst.Attribute):
                if cstutil.is_simple_reference(attribute) and cstutil.code(attribute) in names:
                    return True
        return False

    def _mentions(self, expression: cst.CSTNode, names: frozenset[str]) -> bool:
        """Whether ``expression`` reads one of ``names`` itself (not a value derived from them)."""
        return any(n.value in names for n in cstutil.of_types(expression, cst.Name))

    def gradless_assignment(self, node: cst.Assign, names: set[str]) -> None:
        """``loss, nll = test(model, val_batches)`` inside ``with torch.no_grad():``: what the
        batch gives ``loss`` there has no autograd graph, so a ``loss.backward()`` elsewhere
        differentiates another value bound to the same name (the training step's). Names the
        batch reaches with gradients on stay marked for backward."""
        if self.batches.no_grad_around(node, self.constants) is not None or self._gradless_method(node.value):
            self.gradless |= {n for n in names if n not in self.graded}
        else:
            self.graded |= {cstutil.code(t.target) for t in node.targets if cstutil.is_simple_reference(t.target)}
            self.gradless -= self.graded

    def _gradless_method(self, value: cst.BaseExpression) -> bool:
        """``loss = loss.mean(dim=-1)`` of a gradless ``loss``: a method of that value given
        only constants adds no parameter, so no graph either."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            if any(cstutil.of_types(a.value, cst.Name) for a in value.args):
                return False
            value = value.func.value
        return isinstance(value, cst.Name) and value.value in self.gradless

    def taint(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.tainted.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.taint(element.value)
        elif isinstance(target, cst.StarredElement):
            self.taint(target.value)
        elif isinstance(target, cst.Attribute) and cstutil.is_simple_reference(target):
            self.tainted.add(cstutil.code(target))
            self.dotted = True
        elif isinstance(target, cst.Subscript):
            self.taint(target.value)


def _collected_into(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``inputs`` of ``inputs.append(...)`` / ``.extend(...)``: the list the argument joins."""
    func = value.func if isinstance(value, cst.Call) else None
    if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert") and cstutil.is_simple_reference(func.value):
        return func.value
    return None


def _copied_into(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` of ``x.copy_(b)``, ``x.data.copy_(b)``, ``x.resize_as_(b).copy_(b)``: a buffer the
    argument is copied into in place (the old DCGAN style)."""
    func = value.func if isinstance(value, cst.Call) else None
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("copy_", "resize_as_", "set_"):
        return None
    receiver = func.value
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value.startswith("resize"):
        receiver = receiver.func.value
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        receiver = receiver.value
    return receiver if cstutil.is_simple_reference(receiver) else None


def static_truth(test: cst.BaseExpression, constants: Constants) -> bool | None:
    """The value of ``phase == "train"`` / ``phase != "val"`` / ``phase in ("a", "b")`` /
    ``not ...`` when ``constants`` fixes ``phase``; None otherwise."""
    if not constants:
        return None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = static_truth(test.expression, constants)
        return None if inner is None else not inner
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    left, (comparison,) = test.left, test.comparisons
    right, operator = comparison.comparator, comparison.operator
    if isinstance(right, cst.Name) and right.value in constants and isinstance(operator, (cst.Equal, cst.NotEqual)):
        left, right = right, left
    if not (isinstance(left, cst.Name) and left.value in constants):
        return None
    value = constants[left.value]
    if isinstance(operator, (cst.Equal, cst.NotEqual)) and (other := literal(right)) is not None:
        return (value == other) == isinstance(operator, cst.Equal)
    if isinstance(operator, (cst.In, cst.NotIn)) and isinstance(right, (cst.List, cst.Tuple, cst.Set)):
        options = [literal(e.value) for e in right.elements]
        if None not in options:
            return (value in options) == isinstance(operator, cst.In)
    return None


def _project_step(source: Source, call: cst.Call) -> bool:
    """``steps.disc_step(real, z)``, ``utils.train_step(model, batch, opt)``: a function or a
    method of the project's own modules that trains (``Helper.trains``) is handed the batch."""
    helper = source.project_call(call)
    return helper is not None and helper.trains


def _is_backward(call: cst.Call) -> bool:
    func = call.func
    return (isinstance(func, cst.Attribute) and func.attr.value == "backward") or (isinstance(func, cst.Name) and func.value == "backward")


def _names(target: cst.CSTNode) -> list[str]:
    return [n.value for n in cstutil.of_types(target, cst.Name)]


def _body(block: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The statements of an indented block, or the one-line suite itself."""
    return block.body if isinstance(block, cst.IndentedBlock) else [block]


def iterated_parameter(source: Source, values: Values, function: cst.FunctionDef) -> cst.Param | None:
    """``def forever(loader): while True: for x, _ in loader: yield x``: the parameter whose
    batches a generator yields from a loop over it. It makes no batches of its own: the
    batches are those of whatever its callers hand it."""
    params = [p for p in [*function.params.posonly_params, *function.params.params] if not values.is_self(p, function)]
    for loop in values.own(function, cst.For):
        assert isinstance(loop, cst.For)
        iterated = loop.iter
        while (inner := loader_inner(source, iterated)) is not None:
            iterated = inner
        if not isinstance(iterated, cst.Name) or not any(values.inside(y, loop.body) for y in values.own(function, cst.Yield)):
            continue
        param = next((p for p in params if p.name.value == iterated.value and values.stores_reaching(iterated) == [p.name]), None)
        if param is not None:
            return param
    return None
