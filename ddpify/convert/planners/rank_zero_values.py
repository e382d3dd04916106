"""Code that reads a rank-0 object's values on every rank. ``SummaryWriter(...)``, ``wandb.*``
calls and files opened for writing become ``ddpify.rank_zero(factory)(...)``: rank 0 gets the
real object, the other ranks a ``NullObject`` that absorbs calls and attribute reads. That is
right for calls whose result is dropped (``writer.add_scalar(...)``, ``log.write(...)``), and
wrong where a value is used: ``os.path.join(writer.log_dir, "x")`` raises TypeError on rank 1
(SimCLR's trainer), ``run.name`` is no string there.

The runtime cannot answer such reads (it cannot know what ``log_dir`` rank 0's writer chose): an
attribute of the object, or the result of one of its methods, used as a value (assigned,
passed, formatted) by code that runs on every rank. A logging client with such a read is left
on every rank (``Facts.kept_writes``) and reported: its own logs per rank beat a TypeError. A
file opened for writing stays rank 0's (every rank writing one file garbles it), and the read
is reported.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.file_writes import recording_statement
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, is_simple_reference, of_types

# where a read's value goes nowhere: a statement of its own, a with-item, an assignment target
_DROPPED = (cst.Expr, cst.WithItem, cst.AssignTarget, cst.Del)
# output calls: a no-op object there prints as "NullObject()" on the other ranks, it breaks nothing
_OUTPUT_CALLS = frozenset({"print", "info", "debug", "warning", "warn", "error", "log", "write", "set_description", "set_postfix"})


def plan(recording: Recording, facts: Facts) -> None:
    shared = recording.analysis
    reported: set[int] = set()
    for call in shared.source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        factory = _rank_zero_factory(recording, facts, call)
        holder = _holder(recording, call) if factory is not None else None
        if factory is None or holder is None:
            continue
        key, region = holder
        for use in _value_reads(recording, key, region):
            statement = recording_statement(recording, use)
            line = recording.line(statement)
            if line in reported or _guarded(facts, statement) or _output(statement) or not shared.context.every_rank(use):
                continue
            if _given_to_rank_zero_factory(recording, facts, use):
                continue  # SummaryWriter(comment=run.name): the other ranks never build it either
            if _kept_for_the_object(recording, key, region, use):
                continue  # win = viz.line(...), then viz.line(..., win=win): back into the no-op object
            reported.add(line)
            if factory != "open":  # a client: every rank keeps its own, rather than crash here
                facts.kept_writes.add(call)
                if _writes_on_every_rank(recording, facts, call, key, region):
                    facts.manual.append(_kept_client_item(recording, call, key, factory, use, line))
                break
            facts.manual.append(
                ManualItem(
                    line,
                    f"{_short(use)} is used as a value on every rank, but {key} is ddpify.rank_zero({factory})(...) "
                    f"(line {recording.line(call)}): on the other ranks {key} is a no-op object, not {_what(factory)}, and so is "
                    f"{_short(use)} there (os.path.join, float() or arithmetic with it raises TypeError)",
                    f"compute the value without {key} on every rank ({_instead(factory)}), or use it only under "
                    "`if ddpify.is_main_process():`",
                )
            )


def _rank_zero_factory(recording: Recording, facts: Facts, call: cst.Call) -> str | None:
    """The factory whose object the conversion makes rank 0's (as the transformer decides)."""
    qualified = recording.qualified(call)
    if call in facts.rank_zero_opens:
        return "open"
    if names.is_rank_zero_client(qualified) or call in facts.rank_zero_clients:
        return code(call.func)
    return None


def _holder(recording: Recording, call: cst.Call) -> tuple[str, cst.CSTNode] | None:
    """The reference the object is kept in and the code that can read it: ``writer = ...``
    (its function, or the module), ``self.writer = ...`` (its class), ``with ... as w``."""
    parent = recording.parent(call)
    if isinstance(parent, cst.WithItem) and parent.asname is not None:
        target: cst.BaseExpression = parent.asname.name
        block = recording.parent(parent)
        if is_simple_reference(target) and block is not None:
            return code(target), block
        return None
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and parent.value is call):
        return None
    target = parent.targets[0].target
    if not is_simple_reference(target):
        return None
    key = code(target)
    function, klass = recording.owners_of(call)
    if key.startswith("self.") and klass is not None:
        return key, klass
    return key, function or recording.module


def _value_reads(recording: Recording, key: str, region: cst.CSTNode) -> list[cst.BaseExpression]:
    """``key.attr`` chains (``writer.log_dir``, ``run.summary["x"]``, ``writer.get_logdir()``),
    whole, whose value is used: not a statement of its own, a with-item, an assignment target
    or a truth test."""
    found: list[cst.BaseExpression] = []
    for attribute in of_types(region, cst.Attribute):
        if code(attribute.value) != key:
            continue
        top: cst.CSTNode = attribute
        parent = recording.parent(top)
        while (
            isinstance(parent, cst.Attribute)
            and parent.value is top
            or isinstance(parent, cst.Call)
            and parent.func is top
            or isinstance(parent, cst.Subscript)
            and parent.value is top
        ):
            top, parent = parent, recording.parent(parent)
        if isinstance(parent, _DROPPED) or isinstance(parent, cst.Assign) and top is not parent.value or _truthiness(parent, top):
            continue
        assert isinstance(top, cst.BaseExpression)
        found.append(top)
    return found


def _truthiness(parent: cst.CSTNode | None, node: cst.CSTNode) -> bool:
    """``if run.config:``, ``not writer.enabled``, ``a and writer.x``: the no-op object is
    falsy, which skips the work on the other ranks as intended."""
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
        return parent.test is node
    return isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)) and (
        not isinstance(parent, cst.UnaryOperation) or isinstance(parent.operator, cst.Not)
    )


def _guarded(facts: Facts, statement: cst.CSTNode) -> bool:
    """The conversion runs the statement on rank 0 only (a checkpoint helper, a write)."""
    return statement in facts.rank_zero_helpers or statement in facts.main_process_only


def _output(statement: cst.CSTNode) -> bool:
    """``print(f"... {writer.log_dir}")``, ``logging.info(...)``: output, not a computation."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return False
    func = small.value.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    return name in _OUTPUT_CALLS


def _given_to_rank_zero_factory(recording: Recording, facts: Facts, node: cst.CSTNode) -> bool:
    arg = recording.parent(node)
    call = recording.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and _rank_zero_factory(recording, facts, call) is not None


def _writes_on_every_rank(recording: Recording, facts: Facts, call: cst.Call, key: str, region: cst.CSTNode) -> bool:
    """Kept on every rank, the object writes there: a library's logging client does; an object
    of a project class when building it writes (``CSVLogger`` opens its file), or through a
    method of it that writes and that no statement guarded for rank 0 runs. Deep-SVDD's ``cfg =
    Config(...)``, whose only write (``cfg.save_config()``) the conversion guards, writes
    nothing per rank: a configuration kept everywhere needs no item."""
    if call not in facts.rank_zero_clients:
        return True
    source = recording.analysis.source
    built = source.project_call(call)
    if built is None or built.writes_when_built:
        return True
    guarded = facts.rank_zero_helpers.keys() | facts.main_process_only.keys()
    for method in of_types(region, cst.Call):
        if not (isinstance(method.func, cst.Attribute) and code(method.func.value) == key):
            continue
        helper = source.project_call(method)
        if helper is None or not helper.writes:
            continue  # the project's summary names each method that writes (``Helper.writes``)
        if not any(a in guarded for a in recording.ancestors(method)):
            return True
    return False


def _kept_client_item(recording: Recording, call: cst.Call, key: str, factory: str, use: cst.CSTNode, line: int) -> ManualItem:
    """A logging client whose value every rank computes with stays on every rank: on rank 0
    alone the others would get a no-op object there and fail (TypeError), so each rank keeps
    its own client and writes its logs (into the same files, unless their paths name the rank)
    until the value no longer needs it."""
    return ManualItem(
        recording.line(call),
        f"{factory}(...) stays on every rank (not ddpify.rank_zero): {_short(use)} (line {line}) uses it as a value on every "
        f"rank, which a no-op object on the other ranks could not give (TypeError); so every rank writes its logs (into the same "
        "files, where their paths do not name the rank)",
        f"compute that value without {key} ({_instead(factory)}), then create it on rank 0 only: "
        f"{key} = ddpify.rank_zero({factory})(...), and convert again",
    )


def _kept_for_the_object(recording: Recording, key: str, region: cst.CSTNode, use: cst.CSTNode) -> bool:
    """``self.win = self.viz.line(...)`` whose every later read of ``self.win`` goes back into
    a call of the same object (``self.viz.line(..., win=self.win)``), is a test (``if
    self.win is None``) or is stored in a container: the other ranks' no-op value only meets
    the no-op object, or is kept, never computed with."""
    assign = recording.parent(use)
    if not (isinstance(assign, cst.Assign) and assign.value is use and len(assign.targets) == 1):
        return False
    kept = code(assign.targets[0].target)
    reads = [n for n in of_types(region, cst.Name, cst.Attribute) if code(n) == kept and not _bound_by(recording, n)]
    return bool(reads) and all(
        _into_the_object(recording, key, read) or _tested(recording, read) or _stored(recording, read) for read in reads
    )


def _stored(recording: Recording, node: cst.CSTNode) -> bool:
    """An element of a dict, list or tuple (``{"recon": self.win}`` kept in a checkpoint):
    kept as it is, not computed with (the no-op object pickles)."""
    parent = recording.parent(node)
    if not (isinstance(parent, cst.DictElement) and parent.value is node or isinstance(parent, cst.Element)):
        return False
    container = recording.parent(parent)  # not `"%.4f" % (epoch, loss)`, `f(*[loss])`: computed with
    holder = recording.parent(container) if container is not None else None
    return not isinstance(holder, cst.BinaryOperation) and not (isinstance(holder, cst.Arg) and holder.star)


def _bound_by(recording: Recording, node: cst.CSTNode) -> bool:
    parent = recording.parent(node)
    return isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Attribute) and parent.value is node


def _into_the_object(recording: Recording, key: str, node: cst.CSTNode) -> bool:
    arg = recording.parent(node)
    call = recording.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and code(call.func.value) == key


def _tested(recording: Recording, node: cst.CSTNode) -> bool:
    """``x is None``, ``x is not None``, ``if x:``, ``not x``."""
    parent = recording.parent(node)
    if isinstance(parent, cst.ComparisonTarget):
        parent = recording.parent(parent)
    return (
        isinstance(parent, cst.Comparison)
        and all(isinstance(t.operator, (cst.Is, cst.IsNot)) and code(t.comparator) == "None" for t in parent.comparisons)
        or _truthiness(parent, node)
    )


def _instead(factory: str) -> str:
    """Where the value can come from on every rank."""
    if factory == "open":
        return "e.g. keep the path you opened in a variable"
    if "SummaryWriter" in factory:
        return f"e.g. choose the log directory yourself and pass it to {factory}(log_dir=...)"
    return "e.g. take it from your own arguments or configuration"


def _what(factory: str) -> str:
    if factory == "open":
        return "a file"
    return f"what {factory}() returns" if "." in factory else f"a {factory}"


def _short(node: cst.CSTNode) -> str:
    text = " ".join(code(node).split())
    return text if len(text) <= 50 else text[:47] + "..."
