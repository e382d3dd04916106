"""Files rank 0 writes without waiting and every rank reads later: checkpoints, and the files
the conversion leaves to rank 0 alone (an image grid, an array, a vocabulary).

A ``torch.save`` under a decision the ranks may take differently (``if val_loss < best:``,
computed from each rank's own shard) becomes ``ddpify.save(..., wait=False)``: a barrier there
would hang the ranks that skip the branch. A later ``torch.load`` that every rank runs alike
(the best model reloaded for the test, at the end of the epoch loop or in a function called
after training) then races rank 0's last write: a rank that gets there first reads an older
file, or none. ``ddpify.barrier()`` before that load lets rank 0 finish first, as one process
would; before the ``if os.path.exists(best):`` around it, so that the test sees the file too.

Which file a load reads is not matched against the saved path (paths are built in many ways):
every load that can run after such a save waits, which costs one barrier and is right either
way. Loads that not every rank reaches alike (behind a rank test or a decision the ranks may
take differently) get no barrier: it would hang the ranks that skip them.

A file rank 0 now writes alone (``Facts.rank_zero_files``: ``save_image(x, p)`` moved under
``if ddpify.is_main_process():``) is matched by its path as written: each read of that path
(``Image.open(p)``, ``np.load(p)``, ``open(p)``) that every rank runs alike after the write
waits the same way; one that cannot wait is reported with the barrier a human can place.
"""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.convert import collectives, names
from ddpify.convert.fact_types import Facts, Insertion
from ddpify.convert.planners.directories import is_barrier, tests_existence
from ddpify.convert.planners.rank_zero import on_rank_zero_only, ordered_first, statement_line
from ddpify.convert.planners.read_back import ReadBack
from ddpify.convert.record import Recording
from ddpify.convert.rewrites import RT
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code

# How many calls up from a save and from a load to look for the function that runs both, and
# how many callers at most (same-named methods of many classes: every `.run(` matches each one).
_CALLER_DEPTH = 4
_CALLERS_FOLLOWED = 16
# the function (None: the module) -> the node in it on the way to a save or load
_Chain = dict["cst.FunctionDef | None", cst.CSTNode]


def plan(recording: Recording, facts: Facts) -> None:
    """``ddpify.barrier()`` before each load every rank runs after a save that does not wait,
    and before each read of a file rank 0 now writes alone (``Facts.rank_zero_files``)."""
    analysis = recording.analysis
    calls = analysis.source.of_types(cst.Call)
    saves = [c for c in calls if recording.qualified(c) & names.TORCH_SAVE and collectives.unwaited_save(analysis, c)]
    files = [(w, label, path) for w, label, path in facts.rank_zero_files if not ordered_first(recording, facts, w)]
    if not saves and not files:
        return
    waits = _Waits(recording, facts, [*saves, *(written for written, _, _ in files)])
    for load in calls:
        if recording.qualified(load) & names.TORCH_LOAD and _every_rank_alike(recording, facts, load):
            after = [(save, where) for save in saves if (where := waits.first_after(save, load))]
            if after and _every_rank_alike(recording, facts, after[0][1]):
                lines = ", ".join(str(recording.line(save)) for save, _ in after)
                waits.barrier(
                    after[0][1],
                    f"ddpify.barrier() before reading the checkpoint back (line {recording.line(load)}): rank 0 may still be "
                    f"writing it, saved without waiting (line {lines})",
                )
    reads = ReadBack(recording)
    for written, label, path in files:
        _wait_for_file(recording, facts, waits, reads, written, label, path)


def _wait_for_file(
    recording: Recording, facts: Facts, waits: _Waits, reads: ReadBack, written: cst.CSTNode, label: str, path: cst.BaseExpression
) -> None:
    """Every rank that reads ``path`` alike after rank 0 alone wrote it waits for it; a read
    that cannot wait (not every rank runs it alike, or no order ties it to the write) is
    reported once, with the barrier a human can place."""
    line = statement_line(recording, written)
    waited: set[cst.Call] = set()
    for read in reads.reads_of(path):
        if on_rank_zero_only(recording, facts, read) or ordered_first(recording, facts, read):
            continue
        where = waits.first_after(written, read)
        if where is not None and _every_rank_alike(recording, facts, read) and _every_rank_alike(recording, facts, where):
            waits.barrier(
                where,
                f"ddpify.barrier() before reading {code(path)} back (line {recording.line(read)}): rank 0 alone writes it ({label}, line {line})",
            )
            waited.add(read)
    read_at = reads.line_reading(path, after=line, unless=lambda read: read in waited or ordered_first(recording, facts, read))
    if read_at is not None:
        facts.manual.append(
            ManualItem(
                line,
                f"{code(path)} is now written by rank 0 alone ({label}) and read back on every rank at line {read_at}: "
                "the other ranks may find it missing or incomplete",
                "add `ddpify.barrier()` right after the `if ddpify.is_main_process():` block (every rank must reach it)",
            )
        )


class _Waits:
    """The barriers planned before reads, one per anchor (``_waited_already``: one is enough
    for a run of reads with no write on the way between them); ``writes``: the saves and the
    writes rank 0 makes without waiting."""

    def __init__(self, recording: Recording, facts: Facts, writes: list[cst.CSTNode]) -> None:
        self.recording, self.facts = recording, facts
        self.chains: dict[cst.FunctionDef, _Chain] = {}
        self.save_paths = [_path_to(recording, write, self.chains) for write in writes]
        self.planned = {insertion.key for insertion in facts.inserted}
        self.waited: dict[cst.CSTNode | None, list[cst.BaseStatement]] = {}  # per block, the anchors that got a barrier

    def first_after(self, write: cst.CSTNode, read: cst.CSTNode) -> cst.CSTNode | None:
        return _first_after(self.recording, _path_to(self.recording, write, self.chains), _path_to(self.recording, read, self.chains))

    def barrier(self, where: cst.CSTNode, what: str) -> None:
        recording = self.recording
        anchor = _outermost_existence_test(recording, where)
        key = f"barrier-before:{recording.line(anchor)}"
        if key in self.planned or _follows_barrier(recording, anchor) or _waited_already(recording, anchor, self.waited, self.save_paths):
            return
        self.planned.add(key)
        self.waited.setdefault(recording.parent(anchor), []).append(anchor)
        self.facts.inserted.append(Insertion(key, anchor, snippets.statement("barrier", rt=RT), what, before=True))


def _every_rank_alike(recording: Recording, facts: Facts, node: cst.CSTNode) -> bool:
    context = recording.analysis.context
    return context.every_rank(node) and context.divergent_condition(node) is None and not on_rank_zero_only(recording, facts, node)


def _path_to(recording: Recording, node: cst.CSTNode, chains: dict[cst.FunctionDef, _Chain]) -> _Chain:
    """For the function around ``node`` (None: the module) and its callers up to
    ``_CALLER_DEPTH`` calls away: the node in that function on the way to ``node`` (``node``
    itself, or the call that leads to it). The first call found wins. The callers of each
    function are worked out once (``chains``), and at most ``_CALLERS_FOLLOWED`` of them: the
    work stays linear in the program."""
    function = recording.analysis.source.enclosing_function(node)
    found: _Chain = {function: node}
    if function is not None:
        if function not in chains:
            chains[function] = _callers_of(recording, function)
        for caller, site in chains[function].items():
            found.setdefault(caller, site)
    return found


def _callers_of(recording: Recording, function: cst.FunctionDef) -> _Chain:
    source = recording.analysis.source
    found: _Chain = {}
    frontier: list[cst.FunctionDef | None] = [function]
    for _ in range(_CALLER_DEPTH):
        upper: list[cst.FunctionDef | None] = []
        for current in frontier:
            for site in source.call_sites(current) if current is not None else ():
                if len(found) >= _CALLERS_FOLLOWED:
                    return found
                caller = source.enclosing_function(site)
                if caller is not function and caller not in found:
                    found[caller] = site
                    upper.append(caller)
        frontier = upper
    return found


def _first_after(
    recording: Recording,
    save: _Chain,
    load: _Chain,
) -> cst.CSTNode | None:
    """Where to wait: in the innermost function that runs the save's way before the load's (or
    both inside one loop, whose next pass reaches the load after this one's save), the node on
    the load's way (the load, or the call that leads to it). None when no function does."""
    for function, loaded in load.items():
        saved = save.get(function, loaded)
        if saved is loaded:
            continue  # not on the save's way, or one call leads to both: decided further down
        if recording.line(loaded) > recording.line(saved):
            return loaded
        if _loops_around(recording, saved, function) & _loops_around(recording, loaded, function):
            return loaded
    return None


def _loops_around(recording: Recording, node: cst.CSTNode, function: cst.FunctionDef | None) -> set[cst.CSTNode]:
    loops: set[cst.CSTNode] = set()
    for ancestor in recording.ancestors(node):
        if ancestor is function or isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            loops.add(ancestor)
    return loops


def _outermost_existence_test(recording: Recording, node: cst.CSTNode) -> cst.BaseStatement:
    """The statement to wait before: ``node``'s own, or the ``if os.path.exists(p):`` (or
    ``elif``/``else`` chain) it sits in, outward, so that the test sees rank 0's file too."""
    statement = recording.analysis.source.statement_of(node)
    assert statement is not None
    anchor: cst.BaseStatement = statement
    for ancestor in recording.ancestors(statement):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.With, cst.Try)):
            break
        if isinstance(ancestor, cst.If) and tests_existence(recording, ancestor.test):
            anchor = ancestor
    while isinstance(parent := recording.parent(anchor), cst.If) and parent.orelse is anchor:
        anchor = parent  # an `elif` is a statement of the `if` before it
    return anchor


def _waited_already(
    recording: Recording,
    anchor: cst.BaseStatement,
    waited: dict[cst.CSTNode | None, list[cst.BaseStatement]],
    save_paths: list[_Chain],
) -> bool:
    """An earlier statement of the same block got a barrier, and nothing on a save's way runs
    between the two (``test(model)`` then ``final = torch.load(best)``: one barrier is enough)."""
    block = recording.parent(anchor)
    function = recording.analysis.source.enclosing_function(anchor)
    ways = [path[function] for path in save_paths if function in path]
    for earlier in waited.get(block, []):
        if recording.line(earlier) < recording.line(anchor):
            if not any(recording.line(earlier) <= recording.line(way) < recording.line(anchor) for way in ways):
                return True
    return False


def _follows_barrier(recording: Recording, statement: cst.BaseStatement) -> bool:
    """``ddpify.barrier()`` right before ``statement`` already (converted before)."""
    block = recording.parent(statement)
    body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    index = next((i for i, s in enumerate(body) if s is statement), 0)
    return index > 0 and is_barrier(recording, body[index - 1])
