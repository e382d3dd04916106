"""Where a wrap goes in its block: before the first statement that needs the wrapped model,
after those that only configure it (``ddpify.convert.planners.wraps``' ``Spot``)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.calls import COPIES, HARMLESS_CALLS, LOADS_INTO
from ddpify.convert.planners.statements import find_outside_definitions
from ddpify.convert.planners.wraps import Spot
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import code, of_types


def before_first_stop(recording: Recording) -> Spot:
    """Before the first statement after ``body[anchor]`` that needs the wrapped model (see
    ``_is_stop``), else after the block's last statement: the statements in between configure
    it (optimizer, requires_grad flags), and DDP must see their result. A call of a method of
    the same class that hands the model on counts as handing it on (StyleGAN.pytorch's
    ``self.loss = self.__setup_loss(loss)`` building ``Losses.LogisticGAN(self.dis)``: built
    with the plain module, the loss would run the discriminator around DDP)."""

    def spot(body: Sequence[cst.CSTNode], anchor: int, key: str) -> tuple[cst.CSTNode, str]:
        training = {s.name.value for s in body if isinstance(s, cst.FunctionDef) and _runs_backward(s)}
        handing = _handing_methods(recording, body[anchor], key) if key.startswith("self.") else frozenset()
        for index in range(anchor + 1, len(body)):
            if _is_stop(body[index], key, training, handing):
                return body[index], "before"
        return body[-1], "after"

    return spot


def _handing_methods(recording: Recording, statement: cst.CSTNode, key: str) -> frozenset[str]:
    """The methods of ``statement``'s class whose bodies hand ``key`` (``self.dis``) to other
    code, as ``_is_stop`` counts it."""
    source = recording.analysis.source
    klass = source.enclosing_class(statement)
    if klass is None:
        return frozenset()
    methods = [s for s in klass.body.body if isinstance(s, cst.FunctionDef)] if isinstance(klass.body, cst.IndentedBlock) else []
    return frozenset(m.name.value for m in methods if any(_hands_on(c, key) for c in of_types(m.body, cst.Call)))


def _runs_backward(function: cst.FunctionDef) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward" for c in of_types(function, cst.Call))


def _is_stop(statement: cst.CSTNode, key: str, training: set[str], handing: frozenset[str]) -> bool:
    """A statement the model must already be wrapped for: a loop, a return, a forward call, a
    call that hands the model to other code (``train(model, ...)``, or a method of its class
    that does: ``handing``), or a call of a function of the same block that trains
    (``training_loop()`` under the main guard, which reads the model as a global). Definitions
    are not: their bodies do not run there. Moving (``.to``), configuring and loading the model
    are not either."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(statement, cst.For) and _over_own_members(statement.iter, key):
        return False  # for p in model.parameters(): p.requires_grad = False
    if find_outside_definitions(statement, cst.For, cst.While, cst.Return):
        return True
    for call in find_outside_definitions(statement, cst.Call):
        assert isinstance(call, cst.Call)
        if code(call.func) in (key, f"{key}.forward"):
            return True
        if isinstance(call.func, cst.Name) and call.func.value in training:
            return True
        if isinstance(call.func, cst.Attribute) and code(call.func.value) == "self" and call.func.attr.value in handing:
            return True
        if _hands_on(call, key):
            return True
    return False


def _hands_on(call: cst.Call, key: str) -> bool:
    """``call`` gives ``key`` to other code that may keep it; not a copy (``deepcopy(model)``:
    the plain module, made before the wrap), a harmless call or a load into it."""
    callee = code(call.func).split(".")[-1]
    if callee in COPIES or callee in HARMLESS_CALLS or LOADS_INTO.search(callee):
        return False
    return any(code(arg.value) == key for arg in call.args)


def _over_own_members(iterated: cst.BaseExpression, key: str) -> bool:
    """``model.parameters()``, ``model.named_modules()``... : a loop that configures the model."""
    return (
        isinstance(iterated, cst.Call)
        and isinstance(iterated.func, cst.Attribute)
        and code(iterated.func.value) == key
        and iterated.func.attr.value in _MEMBER_ITERATORS
    )


_MEMBER_ITERATORS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children", "named_children", "buffers"})


def drop_wraps_a_join_covers(recording: Recording, facts: Facts) -> None:
    """One name wrapped twice: inside a branch (``if args.load_dir: model, opt, epoch =
    load_session(model, ...)``, a model the analysis sees as another) and after that branch,
    where the paths join. The wrap at the join runs on every path; the one in the branch
    would run first and fix the options (``prepare_model`` returns an existing wrapper as it
    is), so it goes."""
    wraps = list(facts.model_wraps)
    facts.model_wraps[:] = [
        (key, anchor, where)
        for key, anchor, where in wraps
        if not any(k == key and a is not anchor and _joined_after(recording, anchor, a, w) for k, a, w in wraps)
    ]


def _joined_after(recording: Recording, anchor: cst.CSTNode, other: cst.CSTNode, where: str) -> bool:
    """A wrap at ``other`` (``where``: before or after it) runs after the compound statement that
    holds ``anchor``, in a block around it."""
    child = recording.parent(anchor)
    while child is not None and not isinstance(child, cst.FunctionDef):
        block = recording.parent(child)
        if isinstance(child, cst.BaseCompoundStatement) and isinstance(block, (cst.IndentedBlock, cst.Module)):
            following = list(block.body)[list(block.body).index(child) :]
            if any(s is other and (s is not child or where == "after") for s in following):
                return True
        child = block
    return False
