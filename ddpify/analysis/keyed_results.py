"""Evaluation loops that keep each sample's result under a key read from its batch: predictions
by image id (``preds[int(img_ids[i])] = ...``, ``{t["image_id"].item(): out for t, out in
zip(targets, results)}``), features by file name. A sample a ``DistributedSampler`` repeats to pad
the last shard overwrites its own entry, so the padding is counted once: no metric is skewed
(DETR's COCO evaluation, HybrIK's keypoint evaluation, voxceleb's feature dict).

Only a result computed from the batch counts, stored by plain assignment: ``d[key] += loss`` adds
a repeat twice, and ``meters[category] = AverageMeter()`` under a batch's category is no result.

A name is "from the batch" when the loop target binds it, or an assignment in the loop body
computes it from such a name (in order, one pass: a name bound later is not used earlier)."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.source import Source


def keyed_by_batch(source: Source, loop: cst.For) -> bool:
    """Whether the body of ``loop`` stores a value under a key computed from its batch."""
    tainted = set(_bound(loop.iter, loop.target))
    for node in source.of_types_in(loop.body, cst.Assign, cst.AugAssign, cst.For, cst.DictComp, cst.Dict):
        if isinstance(node, cst.For):
            if _mentions(source, node.iter, tainted):
                tainted.update(_bound(node.iter, node.target))
        elif isinstance(node, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if isinstance(node, cst.Assign) and any(_keyed(source, t, tainted) for t in targets) and _mentions(source, node.value, tainted):
                return True  # a sample's result replaces its entry (`+=` would add a repeat twice; a fresh meter is no result)
            if _mentions(source, node.value, tainted):
                tainted.update(n for t in targets for n in _names(t))
        elif isinstance(node, cst.DictComp):
            inner = tainted | {n for f in _comprehensions(node) if _mentions(source, f.iter, tainted) for n in _bound(f.iter, f.target)}
            if _mentions(source, node.key, inner) and _mentions(source, node.value, inner):
                return True
        elif isinstance(node, cst.Dict) and any(
            isinstance(e, cst.DictElement) and _mentions(source, e.key, tainted) and _mentions(source, e.value, tainted)
            for e in node.elements
        ):
            return True
    return False


def keying_parameters(source: Source, function: cst.FunctionDef) -> tuple[int, ...]:
    """The positions of ``function``'s parameters whose batches a loop of it keys by sample
    (for a project module's summary: ``evaluate(model, ..., data_loader, ...)`` with ``for b in
    logger.log_every(data_loader, 10)``). Each loop is read once."""
    names = [p.name.value for p in function.params.params]
    found: set[str] = set()
    for loop in source.of_types_in(function.body, cst.For):
        iterated = {n.value for n in source.of_types_in(loop.iter, cst.Name)} & set(names)
        if iterated - found and keyed_by_batch(source, loop):
            found |= iterated
    return tuple(i for i, name in enumerate(names) if name in found)


def _keyed(source: Source, target: cst.BaseExpression, tainted: set[str]) -> bool:
    """``results[key] = ...`` with a key from the batch (not a constant: ``losses["total"]``)."""
    if not isinstance(target, cst.Subscript):
        return False
    return any(isinstance(s.slice, cst.Index) and _mentions(source, s.slice.value, tainted) for s in target.slice)


def _comprehensions(node: cst.DictComp) -> list[cst.CompFor]:
    found: list[cst.CompFor] = []
    current: cst.CompFor | None = node.for_in
    while current is not None:
        found.append(current)
        current = current.inner_for_in
    return found


def _bound(iterated: cst.BaseExpression, target: cst.BaseExpression) -> list[str]:
    """The names a loop over ``iterated`` binds that carry its content: not the counter of
    ``enumerate``, an index of ``range``, or the keys of ``.items()`` / ``.keys()`` (a batch
    position and a metric's name are no sample's key: the repeats of the padding get their own)."""
    call = iterated if isinstance(iterated, cst.Call) else None
    func = call.func if call is not None else None
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    if name in ("range", "keys"):
        return []
    if name in ("enumerate", "items") and len(elements) == 2:
        return _names(elements[1])
    return _names(target)


def _names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    return []


def _mentions(source: Source, node: cst.CSTNode, names: set[str]) -> bool:
    return bool(names) and any(n.value in names for n in source.of_types_in(node, cst.Name))
