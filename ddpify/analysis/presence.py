"""Where an optional object exists: ``writer = SummaryWriter() if rank == 0 else None``,
``self.logger = None`` then ``if is_main_process(): self.logger = Logger()``, or a trainer
handed ``logger=logger`` only in the rank-0 branch (``__init__(self, logger=None)``). A test of
such an object (``if self.logger is not None:``, ``if writer:``) is a rank test: the code under
it runs only where the object was made (nowhere, for a parameter no caller passes). Learnt from the assignments of this file, and from the
call sites of the function whose parameter (defaulting to None) the object comes from: in this
file, or else in the project's files that import it (``Project.passed_elsewhere``)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddpify.analysis.ranks import EVERY, NOWHERE, Ranks, weighed
from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code, is_simple_reference


class Presence:
    """Where each optional reference of one file is not None, computed once per target."""

    def __init__(self, source: Source, ranks: Callable[[cst.BaseExpression], Ranks], where: Callable[[cst.CSTNode], Ranks]) -> None:
        self.source = source
        self._ranks = ranks
        self._where = where
        self._found: dict[str, Ranks | None] = {}
        self._busy: set[object] = set()

    def of(self, reference: cst.BaseExpression) -> Ranks | None:
        """Where ``reference`` (a name or ``self.x``) holds an object; None when that does not
        depend on the process (or cannot be told)."""
        if not is_simple_reference(reference):
            return None
        target = code(reference)
        if target in self._busy:
            return None
        if target not in self._found:
            self._busy.add(target)
            try:
                found = self._target(target, reference)
            finally:
                self._busy.discard(target)
            never = found == NOWHERE and isinstance(reference, cst.Name) and not self.source.assignments.get(target)
            self._found[target] = found if found is not None and (found.depends_on_process or never) else None
        return self._found[target]

    def _target(self, target: str, reference: cst.BaseExpression) -> Ranks | None:
        bindings = self.source.assignments.get(target, [])
        if not bindings:
            return self._parameter(reference) if isinstance(reference, cst.Name) else None
        values: list[tuple[Ranks, Ranks]] = []
        for statement, value in bindings:
            if value is None:
                return None
            present = self._value(value, statement)
            if present is None:
                return None
            values.append((self._where(statement), present))
        return weighed(values)

    def _value(self, value: cst.BaseExpression, statement: cst.CSTNode) -> Ranks | None:
        if isinstance(value, cst.Name) and value.value == "None":
            return NOWHERE
        if isinstance(value, cst.IfExp):
            test = self._ranks(value.test)
            body, orelse = self._value(value.body, statement), self._value(value.orelse, statement)
            if body is None or orelse is None:
                return None
            return (test & body) | (~test & orelse)
        if is_simple_reference(value):
            if isinstance(value, cst.Name) and self._parameter_of(value, statement) is not None:
                return self._parameter(value, statement)
            found = self.of(value)
            return found if found is not None else EVERY
        return EVERY

    def _parameter_of(self, name: cst.Name, node: cst.CSTNode) -> tuple[cst.FunctionDef, int, cst.Param] | None:
        function = self.source.enclosing_function(node)
        if function is None:
            return None
        for index, param in enumerate(function.params.params):
            if param.name.value == name.value:
                return function, index, param
        return None

    def _parameter(self, name: cst.Name, node: cst.CSTNode | None = None) -> Ranks | None:
        """A parameter defaulting to None: present where its callers pass an object. One
        defaulting to False (a flag) is told only when no caller sets it: nowhere (SevenNet's
        ``wrap_tqdm=False``: ``if wrap_tqdm:`` never runs)."""
        found = self._parameter_of(name, node if node is not None else name)
        if found is None:
            return None
        function, index, param = found
        if not (isinstance(param.default, cst.Name) and param.default.value in ("None", "False")):
            return None
        flag = param.default.value == "False"
        if flag and self.source.project.may_be_called_elsewhere(f"{param.name.value}="):
            return None  # an importing file may set it by name: not read (it costs their analysis)
        key = (function, param.name.value)
        if key in self._busy:
            return None  # passed on to itself (a wrapper's log(msg, writer=writer) on the object it wraps): unknown
        self._busy.add(key)
        try:
            passed = self._passed_to(function, index, param)
        finally:
            self._busy.discard(key)
        if flag and passed != NOWHERE:
            return None  # a flag some caller sets: its value, not where objects exist
        return passed

    def _passed_to(self, function: cst.FunctionDef, index: int, param: cst.Param) -> Ranks | None:
        """Where the callers of ``function`` pass an object for ``param`` (at ``index``)."""
        owner = self.source.enclosing_class(function)
        if owner is not None and function.name.value == "__init__":
            calls = [c for c in self.source.calls_by_callee.get(owner.name.value, []) if is_simple_reference(c.func)]
        else:
            calls = self.source.call_sites(function)
        if owner is not None:
            index -= 1  # `self` is bound by the call
        if not calls:  # called by the project's files that import this one, or unknown
            callee = owner.name.value if owner is not None and function.name.value == "__init__" else function.name.value
            elsewhere = self.source.project.passed_elsewhere(callee, param.name.value, index)
            return weighed([(where, NOWHERE if p is None else p) for where, p in elsewhere]) if elsewhere is not None else None
        values: list[tuple[Ranks, Ranks]] = []
        for call in calls:
            passed = self.argument(call, param.name.value, index)
            if passed is None:
                return None
            values.append(passed)
        return weighed(values)

    def argument(self, call: cst.Call, name: str, index: int) -> tuple[Ranks, Ranks] | None:
        """Where ``call`` runs and where the argument it passes for parameter ``name`` (at
        ``index``) is an object (nowhere when it passes none: the default None)."""
        passed = passed_argument(call, name, index)
        present = NOWHERE if passed is None else self._value(passed, call)
        return (self._where(call), present) if present is not None else None


def passed_argument(call: cst.Call, name: str, index: int) -> cst.BaseExpression | None:
    """The argument ``call`` passes for the parameter ``name`` at ``index`` (None: none, or
    one a ``*args`` may hold)."""
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword.value == name) if arg.keyword is not None else position == index:
            return arg.value
    return None
