"""Models a helper builds into a container, each given its own optimizer in a loop (stargan-v2's
``self.nets, self.nets_ema = build_model(args)``, then ``for net in self.nets.keys():
self.optims[net] = Adam(self.nets[net].parameters())``): which nets the container holds and
which of them an optimizer steps is what the run builds, so the run decides. One statement,
``ddpify.prepare_trained(self.nets, self.optims)``, wraps in place every module of the
container whose parameters an optimizer of the other holds (EMA copies and frozen nets stay
plain); every later ``self.nets[name]`` / ``nets.generator`` read then hands out the DDP model.

It goes at the end of the ``__init__`` that builds them: by then the constructor has put them
on their final device (``self.to(device)`` of the owning module moves them unseen) and
initialised them, so the wrap's broadcast starts every rank from rank 0's weights. Outside a
constructor it goes right after the statement that builds the optimizers, and only when no
later statement of that function touches the container before it trains.
"""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.analysis.models import Model
from ddpify.convert.fact_types import Facts, Insertion
from ddpify.convert.record import Recording
from ddpify.convert.rewrites import RT
from ddpify.tree.cstutil import code, is_method_call, is_simple_reference, of_types

# calls that train: the wrap must come before the first of them
_TRAINING = ("backward", "step", "zero_grad")
# calls that place a model: the wrap must come after them
_PLACING = ("to", "cuda", "cpu", "load_state_dict", "train", "eval", "float", "half", "apply")


def plan(recording: Recording, facts: Facts, model: Model) -> bool:
    """Wrap the trained values of ``model``'s container at run time (``Facts.inserted``);
    False when ``model`` is not a container element stepped by a container of optimizers, or
    no statement is a safe place for the wrap."""
    found = _containers(recording, model)
    if found is None:
        return False
    modules, optimizers, function = found
    if any(i.key == f"prepare_trained:{modules}" for i in facts.inserted) or _wrapped_already(function, modules):
        return True  # this container's wrap is planned, or was converted before
    optimizer = model.optimizers[0].node
    body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    holding = next((s for s in body if any(a is s for a in recording.analysis.source.ancestors(optimizer))), None)
    if holding is None or of_types(holding, cst.Return):
        return False
    placed = _at_constructor_end(body, holding) if function.name.value == "__init__" else _after_optimizers(body, holding, modules)
    if placed is None:
        return False
    anchor, condition = placed
    statement = snippets.statement("prepare_trained", rt=RT, modules=modules, optimizers=optimizers, condition=condition)
    what = (
        f"wrap for DDP each model of {modules} that an optimizer of {optimizers} steps, once they are on their final device: "
        f"ddpify.prepare_trained({modules}, {optimizers}) (the run tells which they are)"
    )
    facts.inserted.append(Insertion(f"prepare_trained:{modules}", anchor, statement, what))
    facts.container_wraps.append(model.key)
    return True


def _containers(recording: Recording, model: Model) -> tuple[str, str, cst.FunctionDef] | None:
    """(the modules' container, the optimizers' container, the function building them) for
    ``self.optims[k] = Adam(self.nets[k].parameters())`` or ``{k: Adam(nets[k]...) for k in nets}``."""
    key = cst.parse_expression(model.key)
    if not isinstance(key, cst.Subscript) or not is_simple_reference(key.value) or len(model.optimizers) != 1:
        return None
    optimizer = model.optimizers[0].node
    function = recording.function_of(optimizer)
    holder = _holder(recording, optimizer)
    if function is None or holder is None:
        return None
    return code(key.value), holder, function


def _holder(recording: Recording, optimizer: cst.CSTNode) -> str | None:
    """The container the optimizer is stored into: ``self.optims`` of ``self.optims[k] = ...``
    (or of ``self.optims = {k: ... for k in ...}``)."""
    parent = recording.parent(optimizer)
    if isinstance(parent, cst.DictComp) and parent.value is optimizer:
        parent = recording.parent(parent)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and is_simple_reference(parent.targets[0].target):
            return code(parent.targets[0].target)
        return None
    if isinstance(parent, cst.Assign) and parent.value is optimizer and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Subscript) and is_simple_reference(target.value):
            return code(target.value)
    return None


def _wrapped_already(function: cst.FunctionDef, modules: str) -> bool:
    return any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value == "prepare_trained" and c.args and code(c.args[0].value) == modules
        for c in of_types(function, cst.Call)
    )


def _at_constructor_end(body: list[cst.BaseStatement], holding: cst.BaseStatement) -> tuple[cst.CSTNode, str] | None:
    """The constructor's last statement, and the test to repeat around the wrap when the
    optimizers are built under an ``if`` (``if args.mode == 'train':``): a
    test that calls nothing and reads nothing the constructor assigns from there on is still
    what it was. None when the constructor may return early or the test may have changed."""
    last = body[-1]
    if any(of_types(s, cst.Return) for s in body):
        return None
    if not isinstance(holding, cst.If):
        return last, ""
    if of_types(holding.test, cst.Call):
        return None
    read = {code(n) for n in of_types(holding.test, cst.Name, cst.Attribute)}
    later = body[body.index(holding) :]
    assigned = {code(t.target) for s in later for t in of_types(s, cst.AssignTarget, cst.AugAssign, cst.AnnAssign)}  # type: ignore[attr-defined]
    return None if read & assigned else (last, code(holding.test))


def _after_optimizers(body: list[cst.BaseStatement], holding: cst.BaseStatement, modules: str) -> tuple[cst.CSTNode, str] | None:
    """Outside a constructor: after the statement building the optimizers and the statements
    that then only place the container's models (``for net in nets.values(): net.to(device)``),
    up to the first that trains; None when one in between does anything else with the
    container, or leaves the function (the caller may move them)."""
    anchor: cst.CSTNode = holding
    for statement in body[body.index(holding) + 1 :]:
        if _trains(statement):
            break
        if of_types(statement, cst.Return):
            return None
        if modules in code(statement):
            if not _places_only(statement):
                return None
            anchor = statement
    return anchor, ""


def _places_only(statement: cst.CSTNode) -> bool:
    """Every call in it moves, loads or sets the mode of a model, and it assigns nothing."""
    calls = of_types(statement, cst.Call)
    loop = statement.body.body if isinstance(statement, cst.For) and isinstance(statement.body, cst.IndentedBlock) else [statement]
    assigns = [s for s in loop for _ in of_types(s, cst.Assign, cst.AugAssign)]
    return bool(calls) and not assigns and all(is_method_call(c, *_PLACING) or is_method_call(c, "values", "items") for c in calls)


def _trains(statement: cst.CSTNode) -> bool:
    return any(is_method_call(c, *_TRAINING) for c in of_types(statement, cst.Call))
