"""Where a model is on its final device and loaded: the statement after which a wrap belongs.

Every expression holding the model gets a time: frame by frame from the outermost, the
position of the call that led into the next frame, then its own position (its end, when it
has been evaluated). A method reached through ``self.x`` runs at an unknown time after the
call that stored ``x`` (an interval). Times are compared only where they are ordered.

The events are the model's constructions, moves and loads before its first use on the
training path or its wrap (the "stop"). The last event decides the frame; when that frame
only borrows the model (a function it is passed to, which does not keep it on ``self``), the
call that lent it stands for the event, unless the model also trains inside that call (``def
train(model, ...): model = model.to(device)`` then the loop): the wrap then goes in there. The wrap goes after the statement that holds the event
in the innermost block holding every expression of the model in that frame before the stop,
so that it runs on every path (after the whole ``if`` that moves the model in one branch).
Anything that cannot be ordered, or a statement that would also train, gives UNKNOWN with the
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from ddpify.analysis.values import Edge, Occurrence, Values
from ddpify.tree import cstutil

_INF = float("inf")
Interval = tuple[float, float, int]  # earliest, latest, and the function when not exact
Time = tuple[Interval, ...]


@dataclass(frozen=True)
class Placement:
    """``statement``: insert the wrap after it (None: unknown, see ``reason``); ``after``: the
    last construction, move or load it follows (or the call that handed the model to it)."""

    statement: cst.BaseStatement | None
    after: cst.CSTNode | None
    reason: str

    @property
    def known(self) -> bool:
        return self.statement is not None


def last_placement(
    values: Values,
    training: Callable[[cst.CSTNode], bool],
    occurrences: Sequence[Occurrence],
    constructions: Sequence[cst.CSTNode],
    changes: Sequence[cst.CSTNode],
    wraps: Sequence[cst.CSTNode],
    loads: Sequence[cst.CSTNode] = (),
) -> Placement:
    """The placement of the model held by ``occurrences``, built by ``constructions`` and
    moved or loaded by the ``changes`` calls; ``training(node)``: whether a node trains.
    ``loads`` (in-place ``load_state_dict`` calls, part of ``changes``) that cannot be ordered
    against training do not decide it: loaded in place after the wrap, the wrapped model's
    parameters are the same tensors and every rank loads the same checkpoint (a "reload the
    best weights" after training, in another method of a trainer)."""
    source = values.source
    timed = [(o, t) for o in occurrences if (t := _time(values, o)) is not None]
    times = _normalize(values, [t for _, t in timed])
    if times is None:
        return Placement(None, None, "it is returned to more than one caller, so the order of its moves is not known")
    when = {o.node: (o, t) for (o, _), t in zip(timed, times, strict=True)}
    event_nodes = {*constructions, *changes}
    wrapping = set(wraps)
    events: dict[cst.CSTNode, tuple[Occurrence, Time]] = {}
    stops: list[tuple[cst.CSTNode, Time]] = []
    for node, (occurrence, time) in when.items():
        event = _event(source, node, event_nodes)
        wrap = _event(source, node, wrapping)
        if wrap is not None:  # wrapped when the wrap call has run (its argument may move it first)
            stops.append((node, (*time[:-1], (values.end(wrap), values.end(wrap), 0))))
        elif training(node):
            stops.append((node, time))
        elif event is not None and event not in events:
            events[event] = (occurrence, (*time[:-1], (values.end(event), values.end(event), 0)))
    if not stops:
        stops = [(n, t) for n, (_, t) in when.items() if isinstance(source.parent(n), (cst.Call, cst.Arg))]
        stops = [(n, t) for n, t in stops if _event(source, n, event_nodes) is None]
    before = {e: v for e, v in events.items() if all(_compare(v[1], t) == -1 for _, t in stops)}
    unordered = [e for e, (_, t) in events.items() if e not in before and not any(_compare(t, s) == 1 for _, s in stops)]
    unordered = [e for e in unordered if e not in loads]
    if unordered:
        described = _describe(source, unordered[0], constructions)
        function = values.frame_of(unordered[0])
        where = f" in {values.name_of(function)}()" if isinstance(function, cst.FunctionDef) else ""
        return Placement(None, None, f"{described}{where} runs at a time this file does not fix against its use in training")
    if not events and constructions:
        built = " and ".join(f"{cstutil.code(c)[:40]} at line {source.line(c)}" for c in constructions[:2])
        return Placement(None, None, f"ddpify cannot order where it is built ({built}) against its use in training")
    if not events:
        return Placement(None, None, "nothing in this file builds, moves or loads it")
    if not before:
        first = min(source.line(n) for n, _ in stops)
        return Placement(None, None, f"no construction, move or load of it comes before its first use (line {first})")
    last = [e for e, (_, t) in before.items() if all(_compare(other, t) in (-1, 0) for _, other in before.values())]
    if not last:
        lines = ", ".join(str(source.line(e)) for e in before)
        return Placement(None, None, f"the order of its moves and loads (lines {lines}) is not known: they run in different methods")
    event = last[0]
    occurrence, _ = before[event]
    anchor: cst.CSTNode = event
    trail = occurrence.trail
    trails = {id(o.node): o.trail for o, _ in when.values()}
    training_calls = {call for n, _ in stops for call in _open_calls(trails.get(id(n), ()))}
    while (
        (call := values.entered_through(trail)) is not None
        and not _kept(values, occurrences, values.frame_of(anchor))
        and call not in training_calls  # train(model, ...) moves it, then trains it: the wrap goes in there
    ):
        anchor = call
        trail = trail[: max(i for i, e in enumerate(trail) if e.kind == "enter" and e.site is call)]
    frame = values.frame_of(anchor)
    stop_times = [t for _, t in stops]
    here = [n for n, (_, t) in when.items() if values.frame_of(n) is frame and all(_compare(t, s) == -1 for s in stop_times)]
    statement = _statement_after(values, anchor, [*here, anchor])
    described = _describe(source, event, constructions)
    if statement is None:
        return Placement(None, event, f"no statement of its function holds {described}")
    for stop, _ in stops:
        if values.inside(stop, statement) and _event(source, stop, wrapping) is None:
            return Placement(None, event, f"line {source.line(statement)}, which places it ({described}), also uses it for training")
    wrapped = ", in the statement that wraps it" if any(values.inside(w, statement) for w in wrapping) else ""
    where = f" in {values.name_of(frame)}()" if isinstance(frame, cst.FunctionDef) else ""
    if anchor is not event:  # a function the model was lent to moved or loaded it
        return Placement(
            statement, anchor, f"after {cstutil.code(anchor)[:60]} at line {source.line(anchor)}{where}, which runs {described}"
        )
    return Placement(statement, anchor, f"after {described}{where}{wrapped}")


def _open_calls(trail: Sequence[Edge]) -> list[cst.CSTNode]:
    """The calls a trail is still inside at its end (entered and not returned from): the frames
    a use of the model runs in (``place(net)`` returned before ``Trainer(net).fit()`` is none)."""
    stack: list[cst.CSTNode] = []
    for edge in trail:
        if edge.kind == "enter":
            stack.append(edge.site)
        elif edge.kind == "return" and stack:
            stack.pop()
    return stack


def _time(values: Values, occurrence: Occurrence) -> tuple[tuple, Time] | None:
    """(frames left upward, positions from there down) of one expression; None when it is
    in a frame whose place cannot be told (after returning from a method reached via self)."""
    frames: list[Interval] = []
    ups: list[tuple[str, cst.CSTNode | None]] = []
    for edge in occurrence.trail:
        if edge.kind == "enter":
            end = values.end(edge.site)
            frames.append((end, end, 0))
        elif edge.kind == "return":
            if frames and frames[-1][1] == _INF:
                return None
            if frames:
                frames.pop()
            else:
                ups.append(("call", edge.site))
        else:
            tag = values.start(values.frame_of(edge.to)) if edge.to is not None else -1
            if edge.kind == "closure":  # a function run where it is called, or some time after the binding
                frames.append(_called(values, edge) or (values.bound_at(edge.site) + 0.5, _INF, tag))
            elif frames:  # another method, run some time after the call that stored the attribute
                frames[-1] = (frames[-1][0] + 0.5, _INF, tag)
            else:
                ups.append(("attribute", None))
                frames.append((0.5, _INF, tag))
    end = values.end(occurrence.node)
    return tuple(ups), (*frames, (end, end, 0))


def _called(values: Values, edge: Edge) -> Interval | None:
    """When the function reading a variable of an outer frame runs: at its calls, if all of
    them are in the frame that binds the variable."""
    function = values.frame_of(edge.to) if edge.to is not None else None
    calls = [c for c, _ in values.callers(function)] if isinstance(function, cst.FunctionDef) else []
    frame = values.frame_of(edge.site)
    if not calls or any(values.frame_of(c) is not frame for c in calls):
        return None
    ends = [values.end(c) for c in calls]
    return (min(ends), max(ends), 0)


def _normalize(values: Values, times: list[tuple[tuple, Time]]) -> list[Time] | None:
    """Every time seen from the outermost frame any of them reaches."""
    longest = max((ups for ups, _ in times), key=len, default=())
    found: list[Time] = []
    for ups, positions in times:
        if any(a[0] != b[0] or a[1] is not b[1] for a, b in zip(ups, longest, strict=False)):
            return None
        prefix: list[Interval] = []
        for kind, site in reversed(longest[len(ups) :]):
            end = float(values.end(site)) if kind == "call" and site is not None else 0.0
            prefix.append((end, end, 0))
        found.append((*prefix, *positions))
    return found


def _compare(a: Time, b: Time) -> int | None:
    """-1 when ``a`` is before ``b``, 1 after, 0 the same, None when not ordered."""
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x[1] < y[0]:
            return -1
        if y[1] < x[0]:
            return 1
        return None
    return 0 if len(a) == len(b) else None


def _event(source, node: cst.CSTNode, events: set[cst.CSTNode]) -> cst.CSTNode | None:
    """The construction, move, load (or wrap) call ``node`` is, or is the receiver or argument of."""
    if node in events:
        return node
    parent = source.parent(node)
    holder = source.parent(parent) if isinstance(parent, (cst.Attribute, cst.Arg)) else None
    return holder if holder in events else None


def _kept(values: Values, occurrences: Sequence[Occurrence], frame: cst.CSTNode) -> bool:
    """Whether ``frame`` keeps the model (``self.model = model``): then it is its home."""
    source = values.source
    for occurrence in occurrences:
        parent = source.parent(occurrence.node)
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and values.frame_of(occurrence.node) is frame:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            if any(isinstance(t, (cst.Attribute, cst.Subscript)) for t in targets):
                return True
    return False


def _statement_after(values: Values, anchor: cst.CSTNode, nodes: list[cst.CSTNode]) -> cst.BaseStatement | None:
    """The statement holding ``anchor`` in the innermost block that holds all ``nodes``."""
    source = values.source
    child: cst.CSTNode = anchor
    for block in source.ancestors(anchor):
        if isinstance(block, (cst.IndentedBlock, cst.Module)) and isinstance(child, cst.BaseStatement):
            if all(values.inside(n, block) for n in nodes):
                return child
        if isinstance(block, (cst.FunctionDef, cst.ClassDef)):
            return None
        child = block
    return None


def _describe(source, event: cst.CSTNode, constructions: Sequence[cst.CSTNode]) -> str:
    if any(c is event for c in constructions):
        held = "" if isinstance(event, cst.Call) else ", where it is first held"
        return f"its construction {cstutil.code(event)[:60]} at line {source.line(event)}{held}"
    return f"{cstutil.code(event)[:60]} at line {source.line(event)}"
