"""Questions shared by rules DDP014-DDP031: which statements wrap a model and in what order
things happen around the wrap, which calls are collectives, which ``if`` really selects a rank,
where the main guard is, and whether the script sets up a process group at all."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst
from libcst.metadata import PositionProvider

from ddpify.analysis.context import is_main_guard
from ddpify.check.helpers import is_ddp_wrap
from ddpify.check.rule import Rule
from ddpify.convert import names
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code, is_simple_reference

N = TypeVar("N", bound=cst.CSTNode)

DIST = "torch.distributed."
RUNTIME = names.RUNTIME_MODULE + "."

# torch.distributed calls that every rank of the group must make, or all of them wait.
COLLECTIVES = frozenset(
    {
        "barrier",
        "monitored_barrier",
        "all_reduce",
        "all_gather",
        "all_gather_object",
        "all_gather_into_tensor",
        "_all_gather_base",
        "broadcast",
        "broadcast_object_list",
        "reduce",
        "gather",
        "gather_object",
        "scatter",
        "scatter_object_list",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "_reduce_scatter_base",
        "all_to_all",
        "all_to_all_single",
    }
)
# ddpify.runtime helpers with a collective inside (a barrier).
RUNTIME_COLLECTIVES = frozenset({"save", "barrier"})
# Calls that combine values across processes: torch.distributed's own, and the usual helpers
# scripts wrap them in (pytorch/examples AverageMeter.all_reduce, Horovod metric_average,
# DETR reduce_dict, Accelerate gather_for_metrics, torchvision synchronize_between_processes).
REDUCTIONS = frozenset(
    {
        "all_reduce",
        "reduce",
        "all_gather",
        "all_gather_object",
        "all_gather_into_tensor",
        "gather",
        "gather_object",
        "reduce_scatter",
        "reduce_scatter_tensor",
    }
)
REDUCTION_HELPER = re.compile(
    r"(^|_)(all_?reduce|all_?gather|allreduce|allgather)($|_)|^reduce_(tensor|mean|sum|dict|value|loss|metrics?)$|"
    r"^gather_for_metrics$|^synchronize_between_processes$|^metric_average$|^(sync|reduce)_across_\w+$",
    re.I,
)
# Calls that create the default process group (torch, DeepSpeed, device meshes, the usual
# helpers around them, Accelerate/Fabric objects that do it for you).
PROCESS_GROUP_INIT = re.compile(
    r"^(init_process_group|init_distributed\w*|init_dist\w*|dist_init\w*|distributed_init\w*|init_device_mesh|"
    r"setup|\w+_setup|setup_\w+|init_ddp|initialize_distributed|Accelerator|Fabric)$"
)


# ---------------------------------------------------------------- positions and scopes
def start(rule: Rule, node: cst.CSTNode) -> tuple[int, int]:
    position = rule.get_metadata(PositionProvider, node).start
    return position.line, position.column


def scope_of(rule: Rule, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost function, lambda or class holding ``node``, else the module."""
    last: cst.CSTNode = node
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return ancestor
        last = ancestor
    return last


def branches_exclusive(rule: Rule, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """True when ``a`` and ``b`` sit in different branches of one ``if``/``a if c else b``."""
    path_a: dict[cst.CSTNode, cst.CSTNode] = {}
    child = a
    for ancestor in rule.ancestors(a):
        path_a[ancestor] = child
        child = ancestor
    child = b
    for ancestor in rule.ancestors(b):
        if ancestor in path_a:
            if isinstance(ancestor, (cst.If, cst.IfExp)):
                sides = {path_a[ancestor], child}
                return len(sides) == 2 and ancestor.test not in sides
            return False
        child = ancestor
    return False


def in_function(rule: Rule, node: cst.CSTNode) -> bool:
    return any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in rule.ancestors(node))


# ---------------------------------------------------------------- names of calls
def callee_name(call: cst.Call) -> str | None:
    """The last component of the called name: ``dist.all_reduce(...)`` → ``all_reduce``."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def dist_function(rule: Rule, call: cst.Call) -> str | None:
    """``all_reduce`` for ``dist.all_reduce(...)`` / ``torch.distributed.all_reduce(...)``."""
    for name in rule.qualified(call):
        if name.startswith(DIST):
            rest = name[len(DIST) :]
            if rest.startswith("distributed_c10d."):
                rest = rest[len("distributed_c10d.") :]
            if "." not in rest:
                return rest
    return None


def runtime_function(rule: Rule, call: cst.Call) -> str | None:
    """``save`` for ``ddpify.save(...)`` where ``ddpify`` is ``ddpify.runtime``."""
    for name in rule.qualified(call):
        if name.startswith(RUNTIME) and "." not in name[len(RUNTIME) :]:
            return name[len(RUNTIME) :]
    return None


def collective(rule: Rule, call: cst.Call) -> str | None:
    """A printable name when ``call`` is a collective every rank must reach, else None."""
    function = dist_function(rule, call)
    if function in COLLECTIVES:
        return f"dist.{function}"
    function = runtime_function(rule, call)
    if function in RUNTIME_COLLECTIVES:
        return f"ddpify.{function}"
    return None


def nodes(module: cst.Module, kind: type[N]) -> list[N]:
    """Every node of type ``kind`` in ``module``, in source order, from the flat tree that all
    rules of the batch share (libcst matchers walk the whole tree on every call)."""
    return cstutil.of_types(module, kind)  # type: ignore[return-value]


def calls(module: cst.Module) -> Iterator[cst.Call]:
    yield from nodes(module, cst.Call)


def has_reduction(rule: Rule, module: cst.Module) -> bool:
    """Does the script combine anything across processes (or use a library that does)?"""
    for call in calls(module):
        if dist_function(rule, call) in REDUCTIONS:
            return True
        name = callee_name(call)
        if name is not None and REDUCTION_HELPER.search(name):
            return True
    return imports_any(module, ("torchmetrics", "accelerate", "lightning", "pytorch_lightning", "ignite"))


def imports_any(module: cst.Module, packages: tuple[str, ...]) -> bool:
    for node in [*nodes(module, cst.Import), *nodes(module, cst.ImportFrom)]:
        if isinstance(node, cst.Import):
            dotted = [code(alias.name) for alias in node.names]
        elif node.module is not None and not node.relative:
            dotted = [code(node.module)]
        else:
            continue
        if any(d.split(".")[0] in packages for d in dotted):
            return True
    return False


def uses_runtime_setup(rule: Rule, module: cst.Module) -> bool:
    """``ddpify.setup()`` / ``with ddpify.distributed():`` (which also tear the group down)."""
    return any(runtime_function(rule, call) in ("setup", "distributed") for call in calls(module))


def initialises_process_group(rule: Rule, module: cst.Module) -> bool:
    for call in calls(module):
        name = callee_name(call)
        if name is not None and PROCESS_GROUP_INIT.match(name):
            return True
    return uses_runtime_setup(rule, module)


# ---------------------------------------------------------------- with blocks
def guarded_by_context(rule: Rule, node: cst.CSTNode, pattern: re.Pattern[str]) -> bool:
    """Inside ``with X():`` where ``X`` matches ``pattern`` (``main_process_first``...)."""
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, cst.With) and any(pattern.search(code(item.item)) for item in ancestor.items):
            return True
    return False


# ---------------------------------------------------------------- DDP wraps
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


# ---------------------------------------------------------------- evaluation data
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_EVAL_WORD = re.compile(r"^(val|valid|validation|test|testing|eval|evaluation|dev)(set|loader|data|dataset|ds|sampler|s)?\d*$")
_TRAIN_WORD = re.compile(r"^train(ing)?(set|loader|data|dataset|ds|sampler|s)?\d*$")


def _words(text: str) -> list[str]:
    return [w.lower() for part in re.split(r"[_.\W]+", text) for w in _WORDS.findall(part)]


def is_eval_name(text: str) -> bool:
    """``val_loader``, ``testset``, ``self.eval_sampler``, ``devDataset`` (not ``device``)."""
    return any(_EVAL_WORD.match(w) for w in _words(text))


def is_train_name(text: str) -> bool:
    return any(_TRAIN_WORD.match(w) for w in _words(text))


def assigned_to(rule: Rule, node: cst.CSTNode) -> str | None:
    """``x`` when ``node`` is the whole value of ``x = node``."""
    parent = rule.parent(node)
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        if is_simple_reference(target):
            return code(target)
    return None


def keyword_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def is_true(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "True"


def is_false(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"
