"""Data each rank would draw from its own random generator.

- ``random_split(ds, lengths)`` without ``generator=`` draws the permutation from the global
  generator. With no torch seed set before it, every rank holds a different state there, so
  every rank splits differently: a sample one rank trains on, another validates on. The split
  gets ``generator=torch.Generator().manual_seed(0)`` (reported; the seed is there to edit).
  After a seed (``torch.manual_seed``, ``set_seed(...)``) every rank's generator is in the same
  state, so the split is already the same everywhere and stays as written: the converted
  script without a launcher then splits exactly like the original.
- Synthetic data (``torch.randn``, ``np.random.rand``...) that ends up in a dataset with no seed
  set before it: every rank trains on a different dataset. Reported, not rewritten: where a
  seed goes decides everything drawn after it (model init, dropout), the author's call. The
  report gives the line to add, ``ddpify.seed(torch.manual_seed, 0)`` (or to move the script's
  own seed call up when it comes too late).

Seeds are recognised by name (``torch.manual_seed``, ``np.random.seed``, and any call named like
a seed helper: ``set_seed``, ``seed_everything``, ``ddpify.seed``); "before" means earlier in
the same function, at module level, or in a function that calls this one after seeding (one
level): a documented approximation. Code that runs after the converted script joins the
process group needs none of this: ``ddpify.setup`` (also inside ``ddpify.distributed()``)
starts every global RNG the script has not seeded from one seed drawn on rank 0, so such a
split or dataset is the same on every rank, and the plain run draws exactly what the original
did. Only draws at import time, before the group is joined, are rewritten or reported.
"""

from __future__ import annotations

import functools

import libcst as cst

from ddpify.convert import names, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.rank_zero import already_guarded, same_scope_values, statement_line, variables
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import callee_name, code, keyword_value, of_types


def plan(recording: Recording, facts: Facts) -> None:
    """Give unseeded ``random_split`` calls a generator; report unseeded synthetic datasets."""
    seeds = _Seeds(recording, facts)
    torch = _module_name(recording, "torch")
    for call in recording.write_calls:
        if recording.qualified(call) & names.RANDOM_SPLIT:
            _plan_split(recording, facts, seeds, call, torch)
    _report_unseeded_data(recording, facts, seeds, torch)


# ---------------------------------------------------------------- seeds
class _Seeds:
    """The script's seed calls, by the generator they seed ("torch", "numpy", or both)."""

    def __init__(self, recording: Recording, facts: Facts) -> None:
        self.recording = recording
        self.facts = facts
        self.calls: list[tuple[cst.Call, set[str]]] = []
        for call in recording.write_calls:
            kinds = self._kinds(call)
            if kinds:
                self.calls.append((call, kinds))

    def _kinds(self, call: cst.Call) -> set[str]:
        qualified = self.recording.qualified(call)
        if qualified & names.TORCH_SEEDS:
            return {"torch"}
        if qualified & names.NUMPY_SEEDS:
            return {"numpy"}
        if "ddpify.runtime.seed" in qualified and call.args:  # ddpify.seed(torch.manual_seed, s)
            seeded = self.recording.qualified(call.args[0].value)
            return {"torch"} if seeded & names.TORCH_SEEDS else {"numpy"} if seeded & names.NUMPY_SEEDS else set()
        name = callee_name(call) or ""
        if qualified & names.OTHER_SEEDS or name == "manual_seed" or not names.SEED_HELPER.search(name):
            return set()  # a private generator's manual_seed, the CUDA or `random` generator
        return {"torch", "numpy"}  # set_seed(s), seed_everything(s): a helper seeding them all

    def of_kind(self, kind: str) -> list[cst.Call]:
        return [call for call, kinds in self.calls if kind in kinds]

    def before(self, node: cst.CSTNode, kind: str) -> bool:
        """Whether a seed of ``kind`` runs before ``node`` (see the module's docstring)."""
        recording = self.recording
        if self._after_setup(node):
            return True
        line = statement_line(recording, node)
        function = recording.function_of(node)
        for seed in self.of_kind(kind):
            owner, seed_line = recording.function_of(seed), recording.line(seed)
            if owner is function and seed_line < line or owner is None and function is not None:
                return True
            if owner is not None and function is not None and self._calls(owner, function, after=seed_line):
                return True  # main() seeds, then calls the function that splits
            if owner is not None and owner is not function and self._calls(function, owner, before=line):
                return True  # this code calls the seeding function first
        return False

    @functools.cached_property
    def _top_index(self) -> dict[int, int]:
        """Each module-level statement's position, by identity."""
        return {id(statement): i for i, statement in enumerate(self.recording.module.body)}

    def _after_setup(self, node: cst.CSTNode) -> bool:
        """``node`` runs after the converted script's ``ddpify.setup()`` (the ``__main__`` block
        inside ``ddpify.distributed()``, code after the imports when the setup goes there, or
        where a converted script already calls them), which seeds the RNGs the script never
        seeded alike on every rank."""
        facts, recording = self.facts, self.recording
        source = recording.analysis.source
        setups = [*recording.setup_calls, *([facts.setup_after] if facts.setup_after is not None else [])]
        if not recording.analysis.context.at_import_time(node):
            return bool(setups) or facts.main_guard is not None
        index = self._top_index

        def top(at: cst.CSTNode) -> int | None:
            return next((index[id(a)] for a in [at, *source.ancestors(at)] if id(a) in index), None)

        here = top(node)
        return here is None or any((there := top(setup)) is not None and there < here for setup in setups)

    def _calls(self, caller: cst.FunctionDef | None, callee: cst.FunctionDef, *, after: int = 0, before: int = 1 << 30) -> bool:
        recording = self.recording
        name = callee.name.value
        found = [c for c, n in recording.name_calls if n == name] + [c for c, n in recording.self_method_calls if n == name]
        return any(recording.function_of(c) is caller and after < recording.line(c) < before for c in found)


def _module_name(recording: Recording, module: str) -> str | None:
    """The name this file imports ``module`` as at its top level (``torch``, ``np``), or None."""
    for statement in recording.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if code(alias.name) == module:
                            return alias.asname.name.value if alias.asname is not None else module  # type: ignore[union-attr]
    return None


# ---------------------------------------------------------------- random_split
def _plan_split(recording: Recording, facts: Facts, seeds: _Seeds, call: cst.Call, torch: str | None) -> None:
    given = keyword_value(call, "generator") is not None or len([a for a in call.args if a.keyword is None]) >= 3
    if given or any(a.star for a in call.args) or already_guarded(recording, call) or seeds.before(call, "torch"):
        return
    if torch is None:
        facts.manual.append(
            ManualItem(
                statement_line(recording, call),
                "random_split without a generator, and no torch seed before it: each rank splits the data differently",
                "pass generator=torch.Generator().manual_seed(0) (import torch): the same split on every rank",
            )
        )
        return
    facts.node_rewrites[call] = NodeRewrite(
        functools.partial(rewrites_io.with_split_generator, torch=torch),
        "random_split had no generator and no torch seed runs before it, so each rank would split differently: "
        f"generator={torch}.Generator().manual_seed(0) gives every rank the same split (0 is yours to change)",
    )


# ---------------------------------------------------------------- synthetic data
def _report_unseeded_data(recording: Recording, facts: Facts, seeds: _Seeds, torch: str | None) -> None:
    """One item per generator (torch, numpy), at the first unseeded draw that builds a dataset
    (for a Dataset class of this file, where it is built): one seed added there covers the
    draws after it."""
    found: dict[str, dict[cst.CSTNode, tuple[cst.Call, cst.Call]]] = {}
    for sink in _dataset_sinks(recording):
        function = recording.function_of(sink)
        for expression in _sink_inputs(recording, sink):
            for draw, kind in _draws(recording, expression, recording.function_of(expression) or function, set()):
                where = sink if _inside_class(recording, draw) else draw
                if not seeds.before(where, kind):
                    found.setdefault(kind, {}).setdefault(where, (draw, sink))
    for kind, places in sorted(found.items()):
        _report_kind(recording, facts, seeds, torch, kind, places)


def _report_kind(
    recording: Recording, facts: Facts, seeds: _Seeds, torch: str | None, kind: str, places: dict[cst.CSTNode, tuple[cst.Call, cst.Call]]
) -> None:
    ordered = sorted(places, key=lambda p: statement_line(recording, p))
    draw, sink = places[ordered[0]]
    line = statement_line(recording, ordered[0])
    others = sorted({statement_line(recording, p) for p in ordered[1:]} - {line})
    also = f" (and at line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
    sink_line = statement_line(recording, sink)
    built = f" for the dataset of line {sink_line}" if sink_line != line else " for a dataset"
    seed = f"{torch or 'torch'}.manual_seed" if kind == "torch" else f"{_numpy_head(draw)}.seed"
    existing = seeds.of_kind(kind)
    move = f"move the seed call of line {statement_line(recording, existing[0])} before it, or " if existing else ""
    drawn = f"{code(draw.func)}(...) draws data{built}"
    if ordered[0] is sink:  # a Dataset class of this file draws in its __init__
        drawn = f"{code(sink.func)}(...) draws its data with {code(draw.func)}(...)"
    facts.manual.append(
        ManualItem(
            line,
            f"{drawn}{also}, and no seed is set before it: each rank draws a different dataset",
            f"{move}add `ddpify.seed({seed}, 0)` right before this line: the same data on every rank "
            "(shuffling and augmentation still differ per rank once training starts)",
        )
    )


def _numpy_head(draw: cst.Call) -> str:
    """``np.random`` for ``np.random.rand(...)``; ``numpy.random`` for a from-import."""
    text = code(draw.func)
    return text.rsplit(".", 1)[0] if "." in text else "numpy.random"


def _dataset_sinks(recording: Recording) -> list[cst.Call]:
    """Calls that make a dataset or loader of what they are given (``TensorDataset``,
    ``DataLoader``, ``random_split``, a Dataset class of this file)."""
    sinks: list[cst.Call] = [c for c in recording.write_calls if recording.qualified(c) & (names.TENSOR_DATASET | names.RANDOM_SPLIT)]
    sinks += [call for call, _, _ in recording.loader_calls]
    datasets = {c.name.value for c in recording.classes if any("Dataset" in code(b.value) for b in c.bases)}
    sinks += [call for call, name in recording.name_calls if name in datasets]
    return sinks


def _sink_inputs(recording: Recording, sink: cst.Call) -> list[cst.CSTNode]:
    """What a sink is built from: its arguments, and for a Dataset class of this file the body
    of its ``__init__`` (``self.x = torch.randn(n, d)``)."""
    inputs: list[cst.CSTNode] = [a.value for a in sink.args]
    if isinstance(sink.func, cst.Name):
        for klass in recording.classes:
            if klass.name.value == sink.func.value:
                inputs += [f.body for f in of_types(klass.body, cst.FunctionDef) if f.name.value == "__init__"]
    return inputs


def _inside_class(recording: Recording, node: cst.CSTNode) -> bool:
    return recording.owners_of(node)[1] is not None


def _draws(recording: Recording, expression: cst.CSTNode, function: cst.FunctionDef | None, seen: set[str]) -> list[tuple[cst.Call, str]]:
    """Draws from a global generator that ``expression`` is built from, directly or through the
    names it reads (assigned in ``function`` or at module level)."""
    found: list[tuple[cst.Call, str]] = []
    for call in of_types(expression, cst.Call):
        kind = _draw_kind(recording, call)
        if kind is not None:
            found.append((call, kind))
    for name in variables(recording, expression):
        if name in seen:
            continue
        seen.add(name)
        for value in same_scope_values(recording, name, function):
            found += _draws(recording, value, function, seen)
    return found


def _draw_kind(recording: Recording, call: cst.Call) -> str | None:
    """ "torch" or "numpy" for a draw from that library's global generator, None otherwise."""
    qualified = recording.qualified(call)
    if qualified & names.TORCH_DRAWS:
        return None if keyword_value(call, "generator") is not None else "torch"
    for name in qualified:
        if name.startswith(names.NUMPY_RANDOM) and name.count(".") == 2 and name.rsplit(".", 1)[1] not in names.NUMPY_NOT_DRAWS:
            return "numpy"
    return None
