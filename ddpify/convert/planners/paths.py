"""Paths each process names for itself: a directory named after the clock (ranks a second
apart name different ones; rank 0's time is given to every rank where it is read once) and a temporary folder or file each rank creates on its own
(``tempfile.mkdtemp()``, ``TemporaryDirectory()``, ``NamedTemporaryFile()``). Rank 0 now writes
checkpoints and outputs alone, into *its* folder; another rank that reads the path back looks
into its own, empty one.

A temporary folder rank 0 writes into becomes shared when its creation is certain and simple
(``d = tempfile.mkdtemp(...)``, ``with tempfile.TemporaryDirectory(...) as d:``): the runtime
creates it on rank 0 and gives every rank its name. The rest is reported at the write.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import libcst as cst

from ddpify.convert import names, rewrites, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.directories import asks_rank_zero
from ddpify.convert.planners.rank_zero import on_rank_zero_only, same_scope_values, statement_line, variables
from ddpify.convert.planners.read_back import ReadBack
from ddpify.convert.planners.set_orders import once_on_every_rank
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, of_types

SAVES = names.TORCH_SAVE | {"ddpify.runtime.save"}
LOADS = names.TORCH_LOAD | {"ddpify.runtime.load"}


def plan(recording: Recording, facts: Facts) -> None:
    """Report clock-named directories; share or report temporary locations rank 0 writes into."""
    _report_clock_directories(recording, facts, recording.write_calls)
    _plan_temporary_locations(recording, facts)


# ---------------------------------------------------------------- clock-named directories
def _report_clock_directories(recording: Recording, facts: Facts, calls: list[cst.Call]) -> None:
    """``out = Path("runs", time.strftime(...)); out.mkdir()``: every rank reads its own clock,
    so ranks a second apart create different directories (and later look for their files in
    their own). Where the clock is read in an assignment every rank runs once (``now =
    datetime.now()``), the value becomes ``ddpify.agreed(...)``, rank 0's time on every rank, and
    every name built from it agrees; else reported at the directory creation, once per name."""
    reported: set[str] = set()
    for call in calls:
        path = _created_directory(recording, call)
        inline = next((c for c in of_types(path, cst.Call) if recording.qualified(c) & names.CLOCK), None) if path is not None else None
        if inline is not None:  # read again at each use: no one value to agree on
            facts.manual.append(_clock_item(recording, call, code(path), inline))  # type: ignore[arg-type]
            continue
        for variable in _references(recording, path) if path is not None else ():
            clock = _clock_call(recording, variable, recording.function_of(call), set())
            if clock is None or variable in reported:
                continue
            reported.add(variable)
            assign = next((a for a in recording.ancestors(clock) if isinstance(a, cst.Assign)), None)
            if assign is not None and (assign.value in facts.node_rewrites or asks_rank_zero(recording, assign.value)):
                continue
            if assign is not None and (facts.wraps_models() or facts.models_from_caller) and once_on_every_rank(recording, assign):
                facts.node_rewrites[assign.value] = NodeRewrite(
                    rewrites.agreed,
                    f"the name of {variable} uses the clock ({code(clock.func)}()): ddpify.agreed(...) gives every rank rank 0's "
                    f"value of {code(assign.targets[0].target)}, so every rank names the same directory",
                )
                continue
            facts.manual.append(_clock_item(recording, call, variable, clock))


def _clock_item(recording: Recording, call: cst.Call, named: str, clock: cst.Call) -> ManualItem:
    return ManualItem(
        recording.line(call),
        f"the name of {named} uses the clock ({code(clock.func)}()): ranks may create different directories",
        "compute it on rank 0 and broadcast it (torch.distributed.broadcast_object_list), or derive it from a launcher/job id",
    )


def _created_directory(recording: Recording, call: cst.Call) -> cst.BaseExpression | None:
    """The path ``call`` creates as a directory: ``os.makedirs(path)``, ``path.mkdir()``."""
    if recording.qualified(call) & names.MAKE_DIRECTORY:
        return call.args[0].value if call.args else None
    return call.func.value if isinstance(call.func, cst.Attribute) and call.func.attr.value == "mkdir" else None


def _clock_call(recording: Recording, variable: str, function: cst.FunctionDef | None, seen: set[str]) -> cst.Call | None:
    """The clock call (``time.strftime()``) that a value of ``variable`` is built from,
    directly or through other variables assigned in ``function`` or at module level."""
    seen.add(variable)
    if "." in variable:  # `self.time`: what the methods of the reading class assign
        source = recording.analysis.source
        owner = source.enclosing_class(function) if function is not None else None
        values = [
            v
            for statement, v in source.assignments.get(variable, [])
            if v is not None and owner is not None and source.enclosing_class(statement) is owner
        ]
    else:
        values = same_scope_values(recording, variable, function)
    for value in values:
        for call in of_types(value, cst.Call):
            if recording.qualified(call) & names.CLOCK:
                return call
        for name in _references(recording, value):
            if name not in seen and (clock := _clock_call(recording, name, recording.function_of(value), seen)):
                return clock
    return None


def _references(recording: Recording, node: cst.CSTNode) -> list[str]:
    """The plain names read in ``node`` and its ``self.`` attributes (``self.checkpoint_dir`` of
    ``"./checkpoints/" + self.time``: a trainer names its folder in ``__init__``)."""
    found = variables(recording, node)
    for attribute in [node, *of_types(node, cst.Attribute)]:
        if isinstance(attribute, cst.Attribute) and isinstance(attribute.value, cst.Name) and attribute.value.value == "self":
            found.append(code(attribute))
    return found


# ---------------------------------------------------------------- temporary locations
@dataclass
class _Temporary:
    """A temporary folder or file one process creates: the creating call, the name bound to
    it (None when used inline), and whether the creation can become a shared one."""

    call: cst.Call
    name: str | None
    kind: str  # "folder" | "file"
    shareable: bool


def _plan_temporary_locations(recording: Recording, facts: Facts) -> None:
    """Share (or report) each temporary location that rank 0 writes into alone and every rank
    reads back (``torch.load``, ``open``, ``np.load``, ``from_pretrained``...) while it is one per
    process; a location no rank reads back after rank 0's write stays as it is."""
    temporaries = _temporaries(recording, facts)
    if not temporaries:
        return
    writes = _users(recording, temporaries, [(n, p) for n in _rank_zero_writes(recording, facts) for p in _paths_of(recording, n)])
    reads = _users(
        recording,
        temporaries,
        [(c, c.args[0].value) for c in ReadBack(recording).calls() if c.args and not on_rank_zero_only(recording, facts, c)],
    )
    for temporary in temporaries:
        written, read = writes.get(id(temporary)), reads.get(id(temporary))
        if written and read:
            _share_or_report(recording, facts, temporary, written[0], read[0])


def _users(
    recording: Recording, temporaries: list[_Temporary], uses: list[tuple[cst.CSTNode, cst.BaseExpression]]
) -> dict[int, list[cst.CSTNode]]:
    """The nodes whose path expression comes from each temporary location (by its id)."""
    found: dict[int, list[cst.CSTNode]] = {}
    for node, path in uses:
        temporary = _origin(recording, path, recording.function_of(node), temporaries, set())
        if temporary is not None:
            found.setdefault(id(temporary), []).append(node)
    return found


def _temporaries(recording: Recording, facts: Facts) -> list[_Temporary]:
    found: list[_Temporary] = []
    for call in recording.write_calls:
        qualified = recording.qualified(call)
        if not qualified & (names.TEMP_DIRECTORIES | names.TEMP_FILES):
            continue
        kind = "folder" if qualified & names.TEMP_DIRECTORIES else "file"
        parent = recording.parent(call)
        name: str | None = None
        shareable = False
        if isinstance(parent, cst.WithItem) and isinstance(parent.asname, cst.AsName) and isinstance(parent.asname.name, cst.Name):
            name = parent.asname.name.value
            shareable = "tempfile.TemporaryDirectory" in qualified
        elif isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Name):
                name = target.value
                shareable = "tempfile.mkdtemp" in qualified
            elif isinstance(target, cst.Tuple) and len(target.elements) == 2 and isinstance(target.elements[1].value, cst.Name):
                name = target.elements[1].value.value  # fd, path = tempfile.mkstemp()
        elif isinstance(parent, cst.Arg) or isinstance(parent, cst.Attribute):
            name = None  # used inline: os.path.join(tempfile.mkdtemp(), "x")
        found.append(_Temporary(call, name, kind, shareable and not on_rank_zero_only(recording, facts, call)))
    return found


def _rank_zero_writes(recording: Recording, facts: Facts) -> list[cst.CSTNode]:
    """What rank 0 writes alone after the conversion: saves (``ddpify.save`` waits for it),
    statements moved under ``if ddpify.is_main_process():``, files opened on rank 0 only."""
    found: list[cst.CSTNode] = [c for c in recording.write_calls if recording.qualified(c) & SAVES]
    found += [*facts.main_process_only, *facts.rank_zero_helpers, *facts.rank_zero_opens]
    return found


def _paths_of(recording: Recording, node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The expressions that may name where ``node`` writes: a save's file argument, else every
    argument of every call in the statement (a guarded write's path is one of them)."""
    if isinstance(node, cst.Call) and recording.qualified(node) & SAVES:
        return [a.value for a in node.args[1:2]] + [a.value for a in node.args if a.keyword is not None and a.keyword.value == "f"]
    return [a.value for call in of_types(node, cst.Call) for a in call.args] + [
        item.item for w in of_types(node, cst.With) for item in w.items
    ]


def _origin(
    recording: Recording, expression: cst.BaseExpression, function: cst.FunctionDef | None, temporaries: list[_Temporary], seen: set[str]
) -> _Temporary | None:
    """The temporary location ``expression`` is built from (``os.path.join(tmp, "m.pt")``,
    ``f"{tmp}/m.pt"``, ``Path(tmp) / "m.pt"``, ``f.name``), following the names it reads through
    their assignments in ``function`` and at module level."""
    calls = of_types(expression, cst.Call)
    for temporary in temporaries:
        if temporary.call in calls:
            return temporary
    for name in variables(recording, expression):
        for temporary in temporaries:
            if temporary.name == name and recording.function_of(temporary.call) in (function, None):
                return temporary
        if name in seen:
            continue
        seen.add(name)
        for value in same_scope_values(recording, name, function):
            found = _origin(recording, value, function, temporaries, seen)
            if found is not None:
                return found
    return None


def _share_or_report(recording: Recording, facts: Facts, temporary: _Temporary, write: cst.CSTNode, read: cst.CSTNode) -> None:
    what = code(temporary.call.func)
    write_line = statement_line(recording, write)
    read_line = statement_line(recording, read)
    if temporary.shareable:
        shared = "shared_mkdtemp" if "tempfile.mkdtemp" in recording.qualified(temporary.call) else "shared_temporary_directory"
        facts.node_rewrites[temporary.call] = NodeRewrite(
            functools.partial(rewrites_io.shared_temporary, helper=shared),
            f"{temporary.name} is a temporary folder each rank would create for itself: rank 0 alone writes into it "
            f"(line {write_line}) and every rank reads it (line {read_line}); ddpify.{shared}() creates it on rank 0 and gives every rank its name "
            "(one machine; across machines give it dir= on a filesystem they share)",
        )
        return
    held = temporary.name or f"{what}()"
    if temporary.kind == "file":
        todo = (
            "write into a folder every rank shares instead: `tmp_dir = ddpify.shared_mkdtemp()` (rank 0 creates it and broadcasts "
            'its name, as torch.distributed.broadcast_object_list would), then `os.path.join(tmp_dir, "<file>")`'
        )
    elif "tempfile.TemporaryDirectory" in recording.qualified(temporary.call) and temporary.name is not None:
        todo = (
            f"create it on rank 0 and share its name: `{held}_dir = ddpify.shared_mkdtemp()` in place of {held}.name "
            "(rank 0 creates it and broadcasts its name, as torch.distributed.broadcast_object_list would), or a path every rank shares"
        )
    else:
        todo = (
            f"create it on rank 0 and share its name: `{held} = ddpify.shared_mkdtemp()` (rank 0 creates it and broadcasts its name, "
            "as torch.distributed.broadcast_object_list would), or a path every rank shares"
        )
    facts.manual.append(
        ManualItem(
            write_line,
            f"rank 0 alone writes into {held}, a temporary {temporary.kind} each rank creates for itself "
            f"(line {statement_line(recording, temporary.call)}), and line {read_line} reads it back on every rank: "
            "the other ranks find their own, empty one",
            todo,
        )
    )
