"""A device variable's own tests of its name: ``device == "cuda"`` (``assert device == "cuda"``,
``if device == "cuda": torch.cuda.manual_seed_all(seed)``).

The conversion makes ``device = "cuda" if torch.cuda.is_available() else "cpu"`` the rank's own
device, ``ddpify.device_name()``: ``"cuda:1"`` on rank 1. A test of the whole name against
``"cuda"`` then fails on every rank of a GPU run (unseen20s lvl1_cls: its ``assert`` stopped every
rank before training), and a test in an ``if`` silently skips what it guards. The test reads the
device's type instead, ``str(device).partition(":")[0] == "cuda"``: the same answer as before the
conversion, for a name (``"cuda:1"``) and a ``torch.device`` alike. Tests of ``"cpu"`` and
``"cuda" in device`` need nothing."""

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
        if len(comparison.comparisons) != 1 or not isinstance(comparison.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            continue
        left, right = comparison.left, comparison.comparisons[0].comparator
        for side, other in ((left, right), (right, left)):
            if is_simple_reference(side) and code(side) in devices and _names_cuda(other):
                facts.node_rewrites[side] = NodeRewrite(
                    _device_type,
                    f"{code(comparison)}: {code(side)} names this rank's GPU (cuda:LOCAL_RANK), so the test reads its type",
                )


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


def _device_type(node: cst.CSTNode) -> cst.CSTNode:
    """``device`` → ``str(device).partition(":")[0]``."""
    assert isinstance(node, cst.BaseExpression)
    text = cst.Call(cst.Name("str"), [cst.Arg(node)])
    parted = cst.Call(cst.Attribute(text, cst.Name("partition")), [cst.Arg(cst.SimpleString('":"'))])
    return cst.Subscript(parted, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
