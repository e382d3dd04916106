"""Loops: which ``for`` counts epochs, and which loaders a loop iterates.

An epoch loop is one whose variable is named like an epoch (``for epoch in ...``, ``ep``,
``e``), or a ``range(...)`` / ``trange(...)`` whose bound counts epochs (``range(args.epochs)``,
``range(start, NUM_EPOCHS)``; not ``range(steps_per_epoch)``, nor a bound that measures the
examples or batches of one epoch, ``range(num_epoch_examples // batchsize)``), and that is not
itself the loop over batches: a loop whose own body yields (a batch generator's loop) makes the
batches of one epoch, it does not count epochs.

A loop iterates a loader when its header does (``for x in train_loader``, also through
``enumerate``, ``tqdm``, ``zip``, ``iter``, ``islice``, also through a name bound to one of
those: ``epoch_iterator = tqdm(train_loader)``), when a loop nested in it does, when its
body calls ``iter(loader)``, or when its body calls a function of this file that does, the
function's parameters mapped to the call's arguments (``train(model, train_loader)`` with
``def train(model, loader): for x, y in loader``), transitively.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import libcst as cst

from ddpify.analysis.callers import CalleeKey, Callees
from ddpify.analysis.fixpoint import Fixpoint
from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code, is_simple_reference, of_types

EPOCH_VARIABLE = re.compile(r"epoch|^ep$|^e$", re.I)
# A name in a `range(...)` bound that counts epochs (`epochs`, `args.n_epochs`, `NUM_EPOCHS`), not
# the steps or batches of one epoch (`steps_per_epoch`, `epoch_len`).
EPOCH_COUNT = re.compile(r"epoch", re.I)
NOT_EPOCH_COUNT = re.compile(r"per_?epoch|step|batch|iter|len|size|example|sample", re.I)
# A bound that mentions one of these measures the examples or batches of an epoch
# (`range(num_epoch_examples // batchsize)`), whatever its other names say.
EPOCH_MEASURE = re.compile(r"batch|^bs$|_bs$|size|example|sample|^n$|^num$", re.I)
_RANGES = frozenset({"builtins.range", "tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange"})
# Calls whose items are those of their (first / every) argument.
_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "islice", "reversed", "track", "progress_bar"})
_SPREADERS = frozenset({"zip", "chain"})


class Loops:
    """The loops of one file, each judged once."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._iterated: dict[cst.CSTNode, list[str]] = {}
        self._called: dict[cst.CSTNode, list[cst.FunctionDef]] = {}

    def is_epoch_loop(self, loop: cst.For) -> bool:
        """``for epoch in ...``, or ``for t in range(args.epochs)``: a loop counting epochs
        under another name (the range bound says what it counts; ``range(max_steps)`` does not);
        or ``for epoch, seed in enumerate(epoch_seeds)`` around passes over data (a loop inside
        it, or in a function of this file it calls)."""
        if self.is_batch_loop(loop):
            return False
        if isinstance(loop.target, cst.Tuple) and loop.target.elements and self._counts_epochs(loop):
            return True
        if not isinstance(loop.target, cst.Name):
            return False
        if EPOCH_VARIABLE.search(loop.target.value):
            return True
        bound = loop.iter
        if not (isinstance(bound, cst.Call) and self.source.qualified(bound) & _RANGES):
            return False
        mentioned = [n.value for arg in bound.args for n in self.source.of_types_in(arg.value, cst.Name)]
        if any(EPOCH_MEASURE.search(name) for name in mentioned):
            return False
        return any(EPOCH_COUNT.search(name) and not NOT_EPOCH_COUNT.search(name) for name in mentioned)

    def _counts_epochs(self, loop: cst.For) -> bool:
        """``enumerate(...)`` whose count is named like an epoch, around a loop of its own."""
        first = loop.target.elements[0].value if isinstance(loop.target, cst.Tuple) else None
        if not (isinstance(first, cst.Name) and EPOCH_VARIABLE.search(first.value) and isinstance(loop.iter, cst.Call)):
            return False
        if "builtins.enumerate" not in self.source.qualified(loop.iter):
            return False
        inner = [n for n in self.source.of_types_in(loop.body, cst.For) if isinstance(n, cst.For)]
        return bool(inner) or any(self.source.of_types_in(f.body, cst.For) for f in self.called_functions(loop))

    def is_batch_loop(self, loop: cst.For) -> bool:
        """The loop that makes one epoch's batches: its own body yields them (``for idx in
        range(n // bs): yield images[idx * bs:...]``), outside any nested loop or function. A
        ``yield from`` hands out many items per pass: a loop around it may count epochs."""
        yields = [
            y for y in self.source.of_types_in(loop.body, cst.Yield) if isinstance(y, cst.Yield) and not isinstance(y.value, cst.From)
        ]
        return any(self._own_statement(y, loop) for y in yields)

    def _own_statement(self, node: cst.CSTNode, loop: cst.For) -> bool:
        for ancestor in self.source.ancestors(node):
            if ancestor is loop:
                return True
            if isinstance(ancestor, (cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
        return False

    def iterated(self, loop: cst.For) -> list[str]:
        """The references (``train_loader``, ``self.loader``) whose items ``loop`` or the code
        it runs iterates, in source order."""
        found = self._iterated.get(loop)
        if found is None:
            found = self._through_wrappers([*_items_of(loop.iter), *self._iterated_in(loop.body, self._iterates)])
            self._iterated[loop] = found
        return found

    def _through_wrappers(self, keys: list[str]) -> list[str]:
        """``keys`` and, for a name only ever bound to a wrapper of a loader
        (``epoch_iterator = tqdm(train_loader)``), the loader it wraps."""
        found = list(keys)
        for key in keys:
            values = [value for _, value in self.source.assignments.get(key, [])]
            wrapped = [_items_of(v) if isinstance(v, cst.Call) and _callee(v) in _WRAPPERS else [] for v in values]
            if values and all(wrapped):
                found.extend(item for items in wrapped for item in items)
        return list(dict.fromkeys(found))

    def handed_out(self, loop: cst.For) -> list[str]:
        """References the loop's body passes to functions this file does not define
        (``train_one_epoch(model, loader)`` imported from elsewhere): they may iterate them."""
        found: list[str] = []
        for call in self.source.of_types_in(loop.body, cst.Call):
            assert isinstance(call, cst.Call)
            if any(q.startswith("builtins.") for q in self.source.qualified(call)):
                continue  # len(loader), print(loader)
            if self.source.functions_called(call) and (isinstance(call.func, cst.Name) or _on_self(call)):
                continue  # this file's code: iterated() looks inside
            found.extend(code(a.value) for a in call.args if is_simple_reference(a.value) and not a.star)
        return list(dict.fromkeys(found))

    def called_functions(self, loop: cst.For) -> list[cst.FunctionDef]:
        """This file's functions the loop's body calls, directly or through one another."""
        found = self._called.get(loop)
        if found is None:
            seen: dict[cst.FunctionDef, None] = {}
            todo = [f for call in self.source.of_types_in(loop.body, cst.Call) for f in self.source.functions_called(call)]
            while todo:  # each function's calls read once: linear in the functions reached
                function = todo.pop()
                if function in seen:
                    continue
                seen[function] = None
                calls = self.source.of_types_in(function.body, cst.Call)
                todo.extend(f for call in calls for f in self.source.functions_called(call) if f not in seen)
            found = list(seen)
            self._called[loop] = found
        return found

    # ---------------------------------------------------------------- inside
    @functools.cached_property
    def _callees(self) -> Callees:
        return Callees(self.source)

    @functools.cached_property
    def _iterates(self) -> Fixpoint[CalleeKey, tuple[str, ...]]:
        """What each function (and each method name, for all its methods) iterates, its
        parameters written as slots (``_as_slots``), callees included: one fixpoint over the
        calls, each function summarised once."""
        callees = self._callees

        def summary(key: CalleeKey, iterates: Callable[[CalleeKey], tuple[str, ...]]) -> tuple[str, ...]:
            if isinstance(key, str):
                return tuple(dict.fromkeys(k for method in callees.methods(key) for k in iterates(method)))
            return tuple(dict.fromkeys(_as_slots(self._iterated_in(key.body, iterates), key)))

        return Fixpoint(callees.dependencies, summary, (), self.source.budget)

    def _iterated_in(self, body: cst.CSTNode, iterates: Callable[[CalleeKey], tuple[str, ...]]) -> list[str]:
        found: list[str] = []
        for node in self.source.of_types_in(body, cst.For, cst.Call, cst.CompFor):
            if isinstance(node, (cst.For, cst.CompFor)):
                found.extend(_items_of(node.iter))
                continue
            assert isinstance(node, cst.Call)
            if _callee(node) == "iter" and node.args:
                found.extend(_items_of(node))
            for key in self._callees.of_call(node):
                found.extend(_from_slots(iterates(key), node))
        return found


def _callee(call: cst.Call) -> str | None:
    func = call.func
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None


def _on_self(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) and call.func.value.value in ("self", "cls")


def _items_of(iterable: cst.BaseExpression) -> list[str]:
    """``train_loader`` for ``train_loader``, ``enumerate(train_loader, 1)``,
    ``tqdm(train_loader, desc=...)``; both for ``zip(a, b)``."""
    if is_simple_reference(iterable):
        return [code(iterable)]
    if isinstance(iterable, cst.Call):
        positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
        name = _callee(iterable)
        if name in _WRAPPERS and positional:
            return _items_of(positional[0])
        if name in _SPREADERS:
            return [key for value in positional for key in _items_of(value)]
    return []


# A parameter in a function's summary: ``\0<position or "self" or "-">\0<name>`` and the rest
# of the reference (``\x000\x00loader``, ``\x00self\x00\x00.train_loader``), so one summary
# serves every call of every same-named method.
_SLOT = "\0"


def _as_slots(keys: list[str], function: cst.FunctionDef) -> list[str]:
    """What a function iterates, its parameters turned into slots; globals and other names stay."""
    positional = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
    slots: dict[str, str] = {name: str(index) for index, name in enumerate(positional)}
    if positional and positional[0] in ("self", "cls"):
        slots = {name: str(index - 1) for index, name in enumerate(positional)}
        slots[positional[0]] = "self"
    for param in function.params.kwonly_params:
        slots[param.name.value] = "-"
    for star in (function.params.star_arg, function.params.star_kwarg):
        if isinstance(star, cst.Param):
            slots[star.name.value] = "*"  # never filled by one argument
    found = []
    for key in keys:
        root, dot, rest = key.partition(".")
        slot = slots.get(root)
        found.append(key if slot is None else f"{_SLOT}{slot}{_SLOT}{root}{dot}{rest}")
    return found


def _from_slots(keys: tuple[str, ...], call: cst.Call) -> list[str]:
    """A summary seen from a call: a slot becomes the argument's text (``train_loader``) when
    the argument is a plain reference, ``self`` the receiver; unfilled slots are dropped."""
    positional: list[cst.BaseExpression] = []
    keywords: dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.star:
            break
        if arg.keyword is not None:
            keywords[arg.keyword.value] = arg.value
        else:
            positional.append(arg.value)
    found: list[str] = []
    for key in keys:
        if not key.startswith(_SLOT):
            found.append(key)
            continue
        slot, name = key[1:].split(_SLOT, 1)
        name, dot, rest = name.partition(".")
        value: cst.BaseExpression | None = keywords.get(name)
        if slot == "self":
            value = call.func.value if isinstance(call.func, cst.Attribute) else None
        elif slot.isdigit() and int(slot) < len(positional):
            value = positional[int(slot)]
        if value is not None and is_simple_reference(value):
            reference = code(value) + dot + rest
            if reference.count(".") < _MAX_DEPTH:
                found.append(reference)
    return found


# A summary holds references no longer than this: a method that recurses through an attribute
# (``self.G.apply(...)`` calling back into itself) would otherwise make ``self.G.G.G...`` and
# the summaries would grow for ever (a real file ran out of memory); what loops iterate is
# never that deep.
_MAX_DEPTH = 4


def drawn_for_a_split(source: Source, draw: cst.Call) -> bool:
    """A random draw outside every loop whose result no loop reads (``rp =
    torch.randperm(n).tolist()`` sliced once into train and test sets): it splits the data
    once, the same on every rank when seeded alike; it does not pick each step's batches (a
    permutation a loop then walks, ``perm[i:i + bs]``, does)."""
    statement = next((a for a in source.ancestors(draw) if isinstance(a, cst.SimpleStatementLine)), None)
    if statement is None or any(isinstance(a, (cst.For, cst.While, cst.CompFor)) for a in source.ancestors(draw)):
        return False
    targets = [t.target for small in statement.body if isinstance(small, cst.Assign) for t in small.targets]
    names = [n.value for t in targets for n in of_types(t, cst.Name)]
    scope = source.enclosing_function(draw)
    for name in names:
        for use in source.names_by_value.get(name, []):
            if source.enclosing_function(use) is scope and any(isinstance(a, (cst.For, cst.While)) for a in source.ancestors(use)):
                return False
    return True
