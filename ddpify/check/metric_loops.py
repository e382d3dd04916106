"""Loops that accumulate metrics, and whether anything around them combines the ranks' values.

Shared by the rules about unreduced metrics: DDP014 (an evaluation loop over a sharded loader)
and DDP036 (a training loop's running loss or accuracy that is logged or acted on). Both ask
the same questions: does the loop train (backward or an optimizer step, also through a function
of this file or of the project), what does it accumulate (``correct += ...``,
``losses.update(...)``), and does the loop's function, a function it calls or its caller
reduce anything across ranks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis import running_metrics
from ddpify.check.calls import dist_function, nodes
from ddpify.check.rule import Rule
from ddpify.check.script import REDUCTION_HELPER, REDUCTIONS
from ddpify.tree.cstutil import callee_name, code, is_method_call, is_simple_reference, of_types

if TYPE_CHECKING:
    from ddpify.analysis.source import Source

_TRAINING_CALLS = frozenset({"backward", "step", "zero_grad"})


def training_functions(rule: Rule) -> frozenset[str]:
    """Names of this file's functions that call backward or an optimizer step (asked once)."""
    memo = rule.file.memo
    if "training-functions" not in memo:
        module = rule.file.analysis.source.module
        memo["training-functions"] = frozenset(
            f.name.value for f in nodes(module, cst.FunctionDef) if any(is_method_call(c, *_TRAINING_CALLS) for c in of_types(f, cst.Call))
        )
    found = memo["training-functions"]
    assert isinstance(found, frozenset)
    return found


def trains(rule: Rule, loop: cst.For) -> bool:
    """The loop's body calls backward or a step: directly, through a function of this file, or
    through a function or a class's method of the project's modules."""
    own = training_functions(rule)
    for call in of_types(loop.body, cst.Call):
        assert isinstance(call, cst.Call)
        name = callee_name(call)
        if name in own or isinstance(call.func, cst.Attribute) and name in _TRAINING_CALLS:
            return True
        if _project_training_step(rule, call):
            return True
    return False


def _project_training_step(rule: Rule, call: cst.Call) -> bool:
    """``engine.train_one_epoch(...)`` or ``trainer.do_pass(batch)`` where ``trainer`` was made
    by a class of the project's modules (``XTrainer(cfg).train()``) whose method calls backward
    or an optimizer step."""
    source = rule.file.analysis.source
    helper = source.project.helper(call)
    if helper is not None:
        return helper.trains
    func = call.func
    if not isinstance(func, cst.Attribute) or not is_simple_reference(func.value):
        return False
    for _, value in source.assignments.get(code(func.value), []):
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
            value = value.func.value  # XTrainer(cfg).train() / .cuda()
        if isinstance(value, cst.Call) and is_simple_reference(value.func):
            method = source.project.named(f"{code(value.func)}.{func.attr.value}")
            if method is not None and method.trains:
                return True
    return False


def accumulators(rule: Rule, loop: cst.For) -> dict[str, cst.CSTNode]:
    """What the loop's body accumulates (``ddpify.analysis.running_metrics.accumulators``)."""
    return running_metrics.accumulators(rule.file.analysis.source, loop)


def is_reduction(rule: Rule, call: cst.Call) -> bool:
    name = callee_name(call)
    return dist_function(rule, call) in REDUCTIONS or (name is not None and bool(REDUCTION_HELPER.search(name)))


def reduces(rule: Rule, function: cst.FunctionDef) -> bool:
    """``function`` itself calls a reduction."""
    return function in _reductions(rule)[0]


def reduces_through(rule: Rule, function: cst.FunctionDef) -> bool:
    """``function``, or a function of this file it calls or names, transitively, reduces: CvT's
    ``test()`` hands ``_meter_reduce if distributed else ...`` to the code that averages its
    meters, a reduction it runs without calling it by name."""
    return function in _reductions(rule)[1]


def _reductions(rule: Rule) -> tuple[frozenset[cst.FunctionDef], frozenset[cst.FunctionDef]]:
    """The functions that reduce themselves, and those that reach one that does: one pass
    backwards over the file's name references from the reducing functions (linear, asked once)."""
    memo = rule.file.memo
    if "reducing-functions" not in memo:
        source = rule.file.analysis.source
        functions = source.of_types(cst.FunctionDef)
        direct = {f for f in functions if any(is_reduction(rule, call) for call in source.of_types_in(f, cst.Call))}
        naming: dict[cst.FunctionDef, set[cst.FunctionDef]] = {}
        for function in functions:
            for callee in _named_functions(source, function):
                naming.setdefault(callee, set()).add(function)
        reaching, todo = set(direct), list(direct)
        while todo:
            for caller in naming.get(todo.pop(), ()):
                if caller not in reaching:
                    reaching.add(caller)
                    todo.append(caller)
        memo["reducing-functions"] = (frozenset(direct), frozenset(reaching))
    found = memo["reducing-functions"]
    assert isinstance(found, tuple)
    return found


def _named_functions(source: Source, function: cst.FunctionDef) -> Iterator[cst.FunctionDef]:
    """The functions ``function``'s body names: module functions by their bare name, methods of
    its own class through ``self.name`` (not every class's method of that name: a module of many
    classes with same-named methods would make the graph quadratic)."""
    attributes = source.of_types_in(function.body, cst.Attribute)
    members = {id(a.attr) for a in attributes}
    for name in source.of_types_in(function.body, cst.Name):
        if id(name) not in members:
            yield from source.defined_in(None, name.value)
    owner = source.enclosing_class(function)
    if owner is None:
        return
    for attribute in attributes:
        if isinstance(attribute.value, cst.Name) and attribute.value.value == "self":
            yield from source.defined_in(owner, attribute.attr.value)


def module_level_reduces(rule: Rule) -> bool:
    """Module-level code (outside functions) reduces something; asked once per file."""
    memo = rule.file.memo
    if "module-level-reduces" not in memo:
        source = rule.file.analysis.source
        memo["module-level-reduces"] = any(
            is_reduction(rule, call) for call in source.of_types(cst.Call) if source.enclosing_function(call) is None
        )
    return bool(memo["module-level-reduces"])


def unreduced_here(rule: Rule, loop: cst.For) -> bool:
    """The loop's function, the functions it calls and the functions that call it reduce
    nothing (the file's reductions are elsewhere: the training loss, a helper's barrier)."""
    source = rule.file.analysis.source
    function = source.enclosing_function(loop)
    if function is None:
        return False  # module-level: the file's reductions may well be these
    if reduces_through(rule, function):
        return False
    for site in rule.file.analysis.context.call_sites(function):
        caller = source.enclosing_function(site)
        if module_level_reduces(rule) if caller is None else reduces(rule, caller):
            return False
    return True
