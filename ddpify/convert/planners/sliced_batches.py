"""Training batches the script slices itself from whole tensors, in a loop over
``range(0, n, batch_size)`` (``x, y = X_train[i:i + bs], Y_train[i:i + bs]``) or over the
batch numbers (``for step in range(n // bs): x = X[step * bs:(step + 1) * bs]``): there is no
loader to give a sampler, and every rank would train on every row (no speed-up, and nothing said
so). Each slice by the loop's index becomes ``ddpify.batch_part(X_train[i:i + bs])``: every
rank takes its part of each batch, the same cut for every slice of the step (so ``x`` and ``y``
stay paired), and the steps and the global batch stay those of one process; a pass that does
not train (the same loop run for the test split, under no_grad or in eval mode) takes the whole
batch on every rank, so its metrics are the one-process ones. The parts are
disjoint where the data agree across ranks (generated under ``ddpify.seed``, read from files);
an order the function reshuffles (``np.random.shuffle(order)``) differs per rank once training
runs, so such a loop is left as it was and reported with the fix.
Only when the models the loop trains are wrapped: different rows without averaged gradients
would give every rank its own model.
"""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.analysis.source import Source
from ddpify.convert.fact_types import Facts, NodeRewrite, item
from ddpify.convert.planners.batch_lengths import SHAPE_CALLS
from ddpify.convert.record import Recording
from ddpify.convert.rewrites import RT
from ddpify.tree.cstutil import attribute_name, code, is_method_call, is_name, is_simple_reference

_RANGE = frozenset({"builtins.range"})
_SHUFFLES = frozenset({"shuffle", "permutation", "randperm", "sample"})


def plan(recording: Recording, facts: Facts) -> None:
    if not facts.wraps_models():
        return
    source = recording.analysis.source
    training = recording.analysis.training_functions
    for loop in source.of_types(cst.For):
        assert isinstance(loop, cst.For)
        found = _range_index(source, loop)
        if found is None or not _trains(source, loop, training):
            continue
        index, stepped = found
        function = source.enclosing_function(loop)
        slices = [
            s
            for s in source.of_types_in(loop.body, cst.Subscript)
            if _sliced_by(s, index, stepped)
            and source.enclosing_function(s) is function
            and "batch_part" not in code(source.parent(s) or s)
        ]
        if not slices:
            continue
        names = ", ".join(sorted({code(s.value) for s in slices}))
        if _shuffled(source, function, {code(s.value) for s in slices}):
            facts.manual.append(
                item(
                    recording.line(loop),
                    f"batches sliced from {names} by the loop over {index}, in an order reshuffled here: once training runs "
                    "each rank shuffles with its own random stream, so ddpify cannot cut the batches into disjoint parts; "
                    "not sharded, every rank trains on all of it",
                    "shuffle with a generator every rank seeds alike (g = torch.Generator(); g.manual_seed(seed + epoch); "
                    f"order = torch.randperm(n, generator=g)), then take {RT}.batch_part(...) of each slice in the loop",
                )
            )
            continue
        what = (
            f"batches sliced from {names} by the loop over {index} (line {recording.line(loop)}): each rank takes its part of "
            f"every training batch, {RT}.batch_part(...) (the one-process batch split across the ranks, the same cut for each "
            "slice; a pass that does not train takes the whole batch)"
        )
        for piece in slices:
            facts.node_rewrites[piece] = NodeRewrite(_part, what)
        facts.cut_batches = True
        size = _batch_size(loop, slices[0], index, stepped)
        used = _size_used(source, loop, size, slices) if size is not None else None
        if used is not None:
            facts.manual.append(
                item(
                    recording.line(used),
                    f"{size} is the batch length here too (a loss divided by it, a tensor of its size), but each rank now "
                    f"holds only its part of the batch ({size} // world_size rows): this line still counts {size}",
                    "use the length of the rank's own batch there (len(x), x.size(0)): then the averaged gradient is the one-process one",
                )
            )


def _range_index(source: Source, loop: cst.For) -> tuple[str, bool] | None:
    """``i`` of ``for i in range(...)``, and whether the range has a step (a batch size: the
    index is a row; without one it counts batches)."""
    if not isinstance(loop.target, cst.Name) or not isinstance(loop.iter, cst.Call) or not source.qualified(loop.iter) & _RANGE:
        return None
    return loop.target.value, len(loop.iter.args) == 3


def _trains(source: Source, loop: cst.For, training: set[cst.FunctionDef]) -> bool:
    """The loop's body calls ``backward()`` or a function of this file that trains."""
    for call in source.of_types_in(loop.body, cst.Call):
        if is_method_call(call, "backward") or set(source.functions_called(call)) & training:
            return True
    return False


def _shuffled(source: Source, function: cst.FunctionDef | None, sliced: set[str]) -> bool:
    """A sliced name reshuffled in the same function (``np.random.shuffle(order)``, ``order =
    torch.randperm(n)``): once training runs, each rank draws its own order, so the parts of one
    step would not be disjoint. Left as it was (every rank trains on all of it, in its order)."""
    scope = function if function is not None else source.module
    for call in source.of_types_in(scope, cst.Call):
        names = {n.rsplit(".", 1)[-1] for n in source.qualified(call)}
        if not names & _SHUFFLES:
            continue
        parent = source.parent(call)
        targets = [code(t.target) for t in parent.targets] if isinstance(parent, cst.Assign) else []
        if {code(a.value) for a in call.args} & sliced or set(targets) & sliced:
            return True
    return False


def _sliced_by(node: cst.Subscript, index: str, stepped: bool) -> bool:
    """``X[i:i + bs]`` / ``X[i:]`` of a plain name or attribute, starting at the loop's index (a
    row), or for a loop over batch numbers at a multiple of it (``X[step * bs:(step + 1) * bs]``)."""
    if not is_simple_reference(node.value) or len(node.slice) != 1:
        return False
    part = node.slice[0].slice
    if not isinstance(part, cst.Slice) or part.lower is None:
        return False
    if stepped:
        return any(is_name(n, index) for n in _names(part.lower))
    products = [n for n in _names(part.lower) if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply)]
    return any(is_name(p.left, index) or is_name(p.right, index) for p in products)


def _batch_size(loop: cst.For, piece: cst.Subscript, index: str, stepped: bool) -> str | None:
    """The name of the batch size: the range's step, or what the index is multiplied by."""
    if stepped:
        step = loop.iter.args[2].value if isinstance(loop.iter, cst.Call) else None
        return step.value if isinstance(step, cst.Name) else None
    part = piece.slice[0].slice
    lower = part.lower if isinstance(part, cst.Slice) else None
    for node in _names(lower) if lower is not None else []:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            other = node.right if is_name(node.left, index) else node.left if is_name(node.right, index) else None
            if isinstance(other, cst.Name):
                return other.value
    return None


def _size_used(source: Source, loop: cst.For, size: str, slices: list[cst.Subscript]) -> cst.CSTNode | None:
    """A read of ``size`` in the loop's body, outside the slices, as the length of a batch: a
    loss divided by it, a tensor of its size (not a bound test such as ``i + B > n``)."""
    for name in source.of_types_in(loop.body, cst.Name):
        if name.value != size or any(a is s for a in source.ancestors(name) for s in slices):
            continue
        parent = source.parent(name)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Divide, cst.FloorDivide, cst.Multiply)):
            return name  # a loss or a count scaled by the batch length
        call = source.parent(parent) if isinstance(parent, cst.Arg) and parent.value is name else None
        if isinstance(call, cst.Call) and (attribute_name(call.func) or code(call.func)).rsplit(".", 1)[-1] in SHAPE_CALLS:
            return name  # torch.ones(B, 1), x.view(B, -1)
    return None


def _names(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = [node]
    for child in node.children:
        found.extend(_names(child))
    return found


def _part(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    return cst.Call(func=snippets.expression("batch_part", rt=RT), args=[cst.Arg(node)])
