"""Whether a training loader's batch-size variable is also used as the length of a batch
(``valid = torch.ones(batch_size, 1)`` in a GAN's loop, ``x.view(batch_size, -1)`` in a
forward): splitting the global batch over the ranks would break that code, so the loader keeps
the per-process batch (see docs/convert.md, "Global batch preserved").

That decision changes the optimisation (the effective batch grows by world_size), so it takes
real evidence: the *same* variable (the same binding; a ``self.`` attribute of the same class),
read on the training path, as a size given to a call that builds or reshapes a tensor. A log
line (``print``, f-strings, logging), an unpacking that binds the name afresh
(``batch_size, c = x.shape``) or a variable of the same name in another scope decide nothing.
"""

from __future__ import annotations

import re

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import attribute_name, code, is_simple_reference, of_types

# Calls whose arguments are the sizes of the tensor they build or reshape to.
SHAPE_CALLS = frozenset(
    {
        "view",
        "reshape",
        "expand",
        "repeat",
        "unflatten",
        "resize_",
        "new_zeros",
        "new_ones",
        "new_full",
        "new_empty",
        "zeros",
        "ones",
        "full",
        "empty",
        "rand",
        "randn",
        "randint",
        "normal",
        "arange",
        "eye",
        "Tensor",
        "FloatTensor",
        "LongTensor",
        "DoubleTensor",
        "HalfTensor",
        "IntTensor",
        "ByteTensor",
        "BoolTensor",
        "sample",
        "rsample",
    }
)
# Calls whose other arguments are values: the size is the tuple (or ``size=``); a
# distribution's ``sample((batch_size,))`` takes a shape, ``random.sample(xs, k)`` a count.
_SIZE_ONLY_IN_A_SEQUENCE = frozenset({"randint", "normal", "full", "sample", "rsample"})
# what a batch size is called where the loader's own argument is out of sight
_BATCH_SIZE_NAME = re.compile(r"(train_|per_device_|local_)?(batch_?size|bs)", re.IGNORECASE)
# What may stand between the variable and the call's argument list: ``(batch_size, 1)``,
# ``[batch_size]``, ``batch_size * 2``, ``-batch_size``.
_THROUGH = (cst.Tuple, cst.List, cst.Element, cst.BinaryOperation, cst.UnaryOperation, cst.Arg)


def is_variable(node: cst.BaseExpression) -> bool:
    """A batch size one can find again: ``batch_size``, ``args.batch_size``, ``config["batch_size"]``."""
    if isinstance(node, cst.Subscript):
        return _last_name(node) is not None and is_simple_reference(node.value)
    return is_simple_reference(node)


def used_at(recording: Recording, batch: cst.BaseExpression) -> int | None:
    """The first line where the variable ``batch`` (``batch_size``, ``args.batch_size``) is
    used as the length of a batch on the training path, itself or through what carries its
    value (``_carried``); None without such evidence."""
    lines = [
        recording.line(node)
        for node, where in _carried(recording, [(u, u) for u in _uses(recording, batch)])
        if _sizes_a_tensor(recording, node) and _used_in_training(recording, where)
    ]
    return min(lines, default=None)


def _uses(recording: Recording, batch: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The reads of the variable ``batch`` (the same binding), ``batch`` itself left out."""
    spelled = code(batch)
    kind = type(batch) if isinstance(batch, (cst.Name, cst.Attribute, cst.Subscript)) else cst.Attribute
    return [n for n in of_types(recording.module, kind) if n is not batch and code(n) == spelled and _same_variable(recording, batch, n)]


_HOPS = 2  # aliases of aliases, a helper's parameter stored on self: no further
_CARRIERS = 32  # names followed per batch size at most (each costs a walk of the module)


Use = tuple[cst.BaseExpression, cst.BaseExpression]  # a read, and the read whose place says whether it trains


def _carried(recording: Recording, uses: list[Use], hops: int = 0, followed: set[cst.CSTNode] | None = None) -> list[Use]:
    """``uses`` and the reads of what takes their value as it is: a local alias (``bs =
    args.batch_size``, then ``torch.ones(bs, 1)``), the parameter of a function of this file
    it is handed to (``make_targets(batch_size)``: its reads train where the call does), an
    attribute of ``self`` set from it in a method (``self.batch_size = batch_size``, then
    ``torch.ones(self.batch_size)``: its reads train where the value was handed in)."""
    found = list(uses)
    followed = set() if followed is None else followed
    if hops >= _HOPS:
        return found
    for use, where in uses:
        parent = recording.parent(use)
        carrier: cst.BaseExpression | None = None
        handed = False
        if isinstance(parent, cst.Assign) and parent.value is use and len(parent.targets) == 1:
            carrier = parent.targets[0].target
            handed = isinstance(carrier, cst.Attribute)  # `self.batch_size = ...`: read where the object trains
        elif isinstance(parent, cst.Arg) and parent.value is use and isinstance(call := recording.parent(parent), cst.Call):
            carrier, handed = _parameter(recording.analysis.dataflow.values.callees(call), call, parent), True
        if carrier is None or carrier in followed or len(followed) >= _CARRIERS:
            continue  # a parameter reached from many call sites is followed once
        if isinstance(carrier, cst.Name) or (isinstance(carrier, cst.Attribute) and code(carrier).startswith("self.")):
            followed.add(carrier)
            found += _carried(recording, [(u, where if handed else u) for u in _uses(recording, carrier)], hops + 1, followed)
    return found


def _parameter(callees: tuple[tuple[cst.FunctionDef, int], ...], call: cst.Call, arg: cst.Arg) -> cst.Name | None:
    """The parameter that ``arg`` fills in the one function ``call`` runs (``__init__`` for a
    class; ``callees`` counts the parameters the call fills implicitly, ``self``)."""
    if len(callees) != 1 or arg.star:
        return None
    function, implicit = callees[0]
    params = [*function.params.posonly_params, *function.params.params]
    if arg.keyword is not None:
        return next((p.name for p in [*params, *function.params.kwonly_params] if p.name.value == arg.keyword.value), None)
    index = [a for a in call.args if a.keyword is None].index(arg) + implicit
    return params[index].name if index < len(params) else None


def plan_handed_in(recording: Recording, facts: Facts) -> None:
    """Loaders this file does not build (``Facts.helper_loaders``): their batch size is not
    in sight, so the evidence is a value *named* like one (``args.batch_size``, ``bs``) that
    sizes a tensor on the training path. Splitting the batch would then break that code
    (SimCLR's ``torch.arange(self.args.batch_size)`` labels, pytorch-GANs'
    ``torch.ones((training_config['batch_size'], 1))`` targets), so the loader keeps the
    per-process batch, as a loader of this file with such a use does."""
    if not facts.helper_loaders:
        return
    uses = [
        (code(node), recording.line(node))
        for node in of_types(recording.module, cst.Name, cst.Attribute, cst.Subscript)
        if _BATCH_SIZE_NAME.fullmatch(_last_name(node) or "") and _sizes_a_tensor(recording, node) and _used_in_training(recording, node)
    ]
    if uses:
        first = min(uses, key=lambda use: use[1])
        for loader in facts.helper_loaders:
            loader.batch_used_at = first


def _used_in_training(recording: Recording, node: cst.CSTNode) -> bool:
    """``node`` runs on the training path, or builds a variable read there: the targets a GAN
    makes once before its loop (``real_gt = torch.ones((batch_size, 1))``) and compares every
    batch with."""
    dataflow = recording.analysis.dataflow
    if dataflow.on_training_path(node):
        return True
    statement = recording.analysis.source.statement_of(node)
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    target = assign.targets[0].target
    function = recording.function_of(assign)
    return any(
        name is not target and recording.function_of(name) is function and dataflow.on_training_path(name)
        for name in recording.analysis.source.names_by_value.get(target.value, [])
    )


def _last_name(node: cst.CSTNode) -> str | None:
    """``batch_size`` of ``batch_size``, ``args.batch_size`` and ``config["batch_size"]``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Subscript):
        key = node.slice[0].slice if len(node.slice) == 1 else None
        value = key.value if isinstance(key, cst.Index) else None
        return value.evaluated_value if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str) else None
    return attribute_name(node)


def _root(node: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node


def _same_variable(recording: Recording, batch: cst.BaseExpression, other: cst.BaseExpression) -> bool:
    """The same binding (``batch_size`` of one scope, ``args`` of ``args.batch_size``); for
    ``self.batch_size``, the same class."""
    root, other_root = _root(batch), _root(other)
    if not isinstance(root, cst.Name) or not isinstance(other_root, cst.Name):
        return False
    if isinstance(batch, cst.Attribute) and root.value == "self":
        klass = recording.owners_of(batch)[1]
        return klass is not None and recording.owners_of(other)[1] is klass
    if isinstance(recording.parent(other_root), (cst.AssignTarget, cst.Param)):
        return False
    mine = recording.bindings(root, ())
    theirs = recording.bindings(other_root, ())
    return bool({b.scope for b in mine} & {b.scope for b in theirs})


def _sizes_a_tensor(recording: Recording, node: cst.CSTNode) -> bool:
    """``node`` is (part of) a size argument: ``torch.zeros(node, 1)``, ``x.view(node, -1)``;
    or the bound of a slice of rows, ``x[:node // n, ...]`` (glow's ActNorm initialisation on
    the first ``batch_size`` rows): the length of a batch either way."""
    child: cst.CSTNode = node
    parent = recording.parent(child)
    sequence = False
    while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
        child, parent = parent, recording.parent(parent)
    if isinstance(parent, cst.Slice) and child is parent.upper:
        element = recording.parent(parent)
        holder = recording.parent(element) if isinstance(element, cst.SubscriptElement) else None
        return isinstance(holder, cst.Subscript) and holder.slice[0] is element  # the first axis: rows
    child, parent = node, recording.parent(node)
    while isinstance(parent, _THROUGH):
        if isinstance(parent, cst.Arg) and parent.keyword is not None:
            if parent.keyword.value not in ("size", "shape", "sample_shape"):
                return False
            sequence = True
        sequence = sequence or isinstance(parent, (cst.Tuple, cst.List))
        child, parent = parent, recording.parent(parent)
    if not isinstance(parent, cst.Call) or not isinstance(child, cst.Arg):
        return False
    callee = parent.func.value if isinstance(parent.func, cst.Name) else attribute_name(parent.func)
    if callee in _SIZE_ONLY_IN_A_SEQUENCE:
        return sequence  # torch.randint(0, 10, (batch_size,)), not torch.randint(0, batch_size, ...)
    return callee in SHAPE_CALLS
