"""A device variable's own tests of its name: ``device == "cuda"`` (``assert device == "cuda"``,
``if device == "cuda": torch.cuda.manual_seed_all(seed)``).

The conversion makes ``device = "cuda" if torch.cuda.is_available() else "cpu"`` the rank's own
device, ``ddpify.device_name()``: ``"cuda:1"`` on rank 1. A test of the whole name against
``"cuda"`` then fails on every rank of a GPU run (unseen20s lvl1_cls: its ``assert`` stopped every
rank before training), and a test in an ``if`` silently skips what it guards. The test reads the
device's type instead, ``str(device).partition(":")[0] == "cuda"``: the same answer as before the
conversion, for a name (``"cuda:1"``) and a ``torch.device`` alike; so does membership in a
list of names (``device in ("cuda", "mps")``). Tests of ``"cpu"`` and ``"cuda" in device`` need
nothing. A test reads the bindings of its own function where it has some (a helper's own
``device = torch.device(...)`` is no name), else every binding of the file (a parameter is
handed the name)."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names, rewrites
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, is_simple_reference, of_types

_CUDA = "cuda"


def plan(recording: Recording, facts: Facts) -> None:
    source = recording.analysis.source
    devices = {key for key, bindings in source.assignments.items() if _per_rank(recording, key, [v for _, v in bindings])}
    if not devices:
        return
    for comparison in source.of_types(cst.Comparison):
        assert isinstance(comparison, cst.Comparison)
        if len(comparison.comparisons) != 1:
            continue
        left, operator, right = comparison.left, comparison.comparisons[0].operator, comparison.comparisons[0].comparator
        if isinstance(operator, (cst.Equal, cst.NotEqual)):
            sides = [side for side, other in ((left, right), (right, left)) if _names_cuda(other)]
        elif isinstance(operator, (cst.In, cst.NotIn)):
            sides = [left] if _lists_cuda(right) else []
        else:
            continue
        for side in sides:
            if is_simple_reference(side) and code(side) in devices and _bound_here(recording, side):
                facts.node_rewrites[side] = NodeRewrite(
                    _device_type,
                    f"{code(comparison)}: {code(side)} names this rank's GPU (cuda:LOCAL_RANK), so the test reads its type",
                )


def _bound_here(recording: Recording, reference: cst.BaseExpression) -> bool:
    """The bindings of ``reference`` in the innermost function around it that binds it make it a
    per-rank name, or no function around it binds it (a parameter, a global, an attribute)."""
    source = recording.analysis.source
    key = code(reference)
    bindings = source.assignments.get(key, [])
    functions = [a for a in source.ancestors(reference) if isinstance(a, cst.FunctionDef)]
    for function in functions:  # innermost first: a nested function reads its outer function's local
        local = [v for statement, v in bindings if source.enclosing_function(statement) is function]
        if local:
            return _per_rank(recording, key, local)
    return True


def _per_rank(recording: Recording, key: str, values: list[cst.BaseExpression | None]) -> bool:
    """``key`` is a device variable one of whose assignments the conversion makes the rank's own
    name (``"cuda"`` → ``ddpify.device_name()``). A ``torch.device`` never equals a string, before
    the conversion or after: its tests are left as they are."""
    if not names.DEVICE_VARIABLE.match(key.rpartition(".")[2]):
        return False

    def is_torch_device(call: cst.Call) -> bool:
        return bool(recording.qualified(call) & names.TORCH_DEVICE)

    return any(
        v is not None
        and not any(is_torch_device(c) for c in [v, *of_types(v, cst.Call)] if isinstance(c, cst.Call))
        and rewrites.device_value(v, allow_int=True, is_torch_device=is_torch_device, text=True) is not v
        for v in values
    )


def _names_cuda(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == _CUDA


def _lists_cuda(node: cst.BaseExpression) -> bool:
    """``("cuda", "mps")``, ``["cuda"]``: names of which one is ``"cuda"``."""
    return isinstance(node, (cst.Tuple, cst.List, cst.Set)) and any(_names_cuda(e.value) for e in node.elements)


def _device_type(node: cst.CSTNode) -> cst.CSTNode:
    """``device`` → ``str(device).partition(":")[0]``."""
    assert isinstance(node, cst.BaseExpression)
    text = cst.Call(cst.Name("str"), [cst.Arg(node)])
    parted = cst.Call(cst.Attribute(text, cst.Name("partition")), [cst.Arg(cst.SimpleString('":"'))])
    return cst.Subscript(parted, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
