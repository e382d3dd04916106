"""DDP wraps and what happens around them: which calls wrap a model (``DDP(model)``,
``ddpify.prepare_model``), which statements bind the wrapped model and where, whether a use
comes after the wrap, and whether a wrapped model's ``state_dict()`` reaches a save."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from ddpify.analysis.context import is_main_guard
from ddpify.analysis.wrap_tests import wrapped_here
from ddpify.check.calls import nodes
from ddpify.check.places import branches_exclusive, contradictory, scope_of, start
from ddpify.check.rule import Rule
from ddpify.check.writes import is_save_call, root_name
from ddpify.tree.cstutil import code, is_method_call, is_name, is_simple_reference, of_types

DDP_WRAPPERS = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "ddpify.runtime.prepare_model",
    }
)

DDP_CLASSES = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})


def is_ddp_wrap(rule: Rule, call: cst.Call) -> bool:
    return bool(rule.qualified(call) & DDP_WRAPPERS)


def is_ddp_class_call(rule: Rule, call: cst.Call) -> bool:
    """A literal ``DistributedDataParallel(...)`` (not ``ddpify.prepare_model``, which converts
    BatchNorm itself)."""
    return bool(rule.qualified(call) & DDP_CLASSES)


def call_assignments(module: cst.Module) -> list[cst.Assign]:
    """Assignments of a call's result (``x = f(...)``): where a wrap or a loader is made."""
    return [a for a in of_types(module, cst.Assign) if isinstance(a, cst.Assign) and isinstance(a.value, cst.Call)]


def wrap_sites(rule: Rule, module: cst.Module) -> dict[str, list[cst.Assign]]:
    """``name -> [assignments of a DDP wrap to it]`` (``model = DDP(model)``, ``prepare_model``)."""
    sites: dict[str, list[cst.Assign]] = {}
    for assign in call_assignments(module):
        if len(assign.targets) == 1 and is_ddp_wrap(rule, assign.value):  # type: ignore[arg-type]
            target = assign.targets[0].target
            if is_simple_reference(target):
                sites.setdefault(code(target), []).append(assign)
    return sites


def _enclosing_function(rule: Rule, node: cst.CSTNode) -> cst.FunctionDef | None:
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
    return None


def _line(rule: Rule, node: cst.CSTNode) -> int:
    return rule.get_metadata(PositionProvider, node).start.line


def wrapped_when(rule: Rule, node: cst.CSTNode, name: str, sites: dict[str, list[cst.Assign]]) -> bool:
    """Whether ``name`` may hold the wrapped model where ``node`` runs: some wrap of ``name``
    comes before it, or lives in another function (order unknown). A use that precedes every
    wrap in its own function sees the plain model, and so does one in the branch a wrap test
    leaves to the plain model (``ddpify.analysis.wrap_tests``)."""
    wraps = sites.get(name, [])
    if not wraps or wrapped_here(rule.file.analysis.source, node, name) is False:
        return False  # never wrapped, or in the branch of `if is_parallel(model)` without the wrapper
    function = _enclosing_function(rule, node)
    line = _line(rule, node)
    for wrap in wraps:
        wrap_function = _enclosing_function(rule, wrap)
        if wrap_function is function:
            if _line(rule, wrap) < line and not contradictory(rule, wrap, node):
                return True
        elif not _called_before(rule, function, wrap_function, _line(rule, wrap)) and not _separate_locals(name, function, wrap_function):
            return True
    return False


def _separate_locals(name: str, function: cst.FunctionDef | None, other: cst.FunctionDef | None) -> bool:
    """``name`` is a local variable of both functions, and ``other`` does not hand its value
    back (``return model``): ``model = DDP(model)`` in ``train_worker`` is not the ``model`` that
    ``load_trained_model`` builds and loads."""
    if function is None or other is None or "." in name:
        return False
    if not (_local(name, function) and _local(name, other)):
        return False
    return not any(isinstance(r.value, cst.Name) and r.value.value == name for r in of_types(other, cst.Return))


def _local(name: str, function: cst.FunctionDef) -> bool:
    """Assigned in ``function``'s own body, neither its parameter nor declared global or nonlocal."""
    if any(p.name.value == name for p in (*function.params.params, *function.params.kwonly_params, *function.params.posonly_params)):
        return False
    if any(n.name.value == name for d in of_types(function, cst.Global, cst.Nonlocal) for n in d.names):  # type: ignore[attr-defined]
        return False
    return any(is_name(t.target, name) for a in of_types(function, cst.Assign) for t in a.targets)


def _called_before(rule: Rule, callee: cst.FunctionDef | None, caller: cst.FunctionDef | None, line: int) -> bool:
    """Whether ``caller`` calls ``callee`` (``self._load(...)`` / ``load(...)``) before ``line``:
    then ``callee`` runs before the wrap there (``__init__`` loading a snapshot, then wrapping)."""
    if callee is None or caller is None:
        return False
    target = callee.name.value
    return any(_is_call_of(call, target) and _line(rule, call) < line for call in of_types(caller, cst.Call))


def _is_call_of(node: cst.CSTNode, function: str) -> bool:
    """``function(...)`` or ``self.function(...)``: a call of a module function or a method."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute):
        return is_name(node.func.value, "self") and node.func.attr.value == function
    return is_name(node.func, function)


def wrapped_state_dict_saves(rule: Rule, module: cst.Module, sites: dict[str, list[cst.Assign]]) -> list[cst.Call]:
    """``W.state_dict()`` calls on a wrapped ``W`` whose result reaches a save: directly
    (``torch.save(model.state_dict(), p)``), or through a variable or dict the save receives
    (``ckpt = {"model": model.state_dict()}; torch.save(ckpt, p)``)."""
    saved_names: set[str] = set()
    for call in of_types(module, cst.Call):
        assert isinstance(call, cst.Call)
        if is_save_call(rule, call):
            for arg in call.args:
                saved_names.update(n.value for n in of_types(arg.value, cst.Name))
    found: list[cst.Call] = []
    for call in of_types(module, cst.Call):
        if not is_method_call(call, "state_dict"):
            continue
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        receiver = code(call.func.value)
        if receiver not in sites or not wrapped_when(rule, call, receiver, sites):
            continue
        if _reaches_save(rule, call, saved_names):
            found.append(call)
    return found


def _reaches_save(rule: Rule, call: cst.Call, saved_names: set[str]) -> bool:
    for ancestor in rule.ancestors(call):
        if isinstance(ancestor, cst.Call) and is_save_call(rule, ancestor):
            return True
        if isinstance(ancestor, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets: list[cst.CSTNode]
            if isinstance(ancestor, cst.Assign):
                targets = [t.target for t in ancestor.targets]
            else:
                targets = [ancestor.target]
            return any(root_name(t) in saved_names for t in targets)
        if isinstance(ancestor, (cst.BaseStatement, cst.Lambda)):
            return False
    return False


@dataclass(frozen=True)
class Wrap:
    """``target = DDP(model, ...)`` (or ``ddpify.prepare_model``, or ``DDP(m) if c else m``)."""

    target: str
    statement: cst.Assign
    call: cst.Call
    conditional: bool  # the value is a conditional expression, or the statement sits under an `if`
    scope: cst.CSTNode

    @property
    def model(self) -> str | None:
        """The wrapped module's expression when it is a plain reference."""
        if self.call.args and self.call.args[0].keyword is None and is_simple_reference(self.call.args[0].value):
            return code(self.call.args[0].value)
        for arg in self.call.args:
            if arg.keyword is not None and arg.keyword.value in ("module", "model") and is_simple_reference(arg.value):
                return code(arg.value)
        return None


def ddp_wraps(rule: Rule, module: cst.Module) -> list[Wrap]:
    found: list[Wrap] = []
    for assign in nodes(module, cst.Assign):
        if len(assign.targets) != 1 or not is_simple_reference(assign.targets[0].target):
            continue
        value = assign.value
        conditional = False
        call: cst.Call | None = None
        if isinstance(value, cst.Call) and is_ddp_wrap(rule, value):
            call = value
        elif isinstance(value, cst.IfExp):
            for side in (value.body, value.orelse):
                if isinstance(side, cst.Call) and is_ddp_wrap(rule, side):
                    call, conditional = side, True
        if call is None:
            continue
        scope = scope_of(rule, assign)
        for ancestor in rule.ancestors(assign):
            if ancestor is scope:
                break
            if isinstance(ancestor, cst.If) and not is_main_guard(ancestor):
                conditional = True
        found.append(Wrap(code(assign.targets[0].target), assign, call, conditional, scope))
    return found


def assignments(rule: Rule, module: cst.Module) -> dict[str, list[cst.Assign]]:
    """Every ``name = ...`` / ``self.x = ...`` statement, by target text."""
    by_target: dict[str, list[cst.Assign]] = {}
    for assign in nodes(module, cst.Assign):
        for target in assign.targets:
            if is_simple_reference(target.target):
                by_target.setdefault(code(target.target), []).append(assign)
    return by_target


def wrap_in_effect(rule: Rule, wraps: list[Wrap], assigned: dict[str, list[cst.Assign]], node: cst.CSTNode, name: str) -> Wrap | None:
    """The wrap of ``name`` that ``node`` comes after in the same scope, with no other
    assignment to ``name`` in between and not in the other branch of an ``if``."""
    where = start(rule, node)
    scope = scope_of(rule, node)
    holders = set(rule.ancestors(node))
    best: Wrap | None = None
    for wrap in wraps:
        if wrap.target != name or wrap.scope is not scope or start(rule, wrap.statement) >= where or wrap.statement in holders:
            continue
        if branches_exclusive(rule, wrap.statement, node):
            continue
        if best is None or start(rule, wrap.statement) > start(rule, best.statement):
            best = wrap
    if best is None:
        return None
    since = start(rule, best.statement)
    for assign in assigned.get(name, []):
        if assign in holders:
            continue
        if assign is best.statement or scope_of(rule, assign) is not scope:
            continue
        if since < start(rule, assign) < where and not any(w.statement is assign for w in wraps):
            return None
    return best


def receiver(call: cst.Call) -> str | None:
    """``model`` for ``model.to(...)``; ``model.module`` stays as written."""
    if isinstance(call.func, cst.Attribute) and is_simple_reference(call.func.value):
        return code(call.func.value)
    return None
