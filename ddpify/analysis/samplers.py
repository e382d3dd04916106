"""Which loaders draw through a ``DistributedSampler``: the loaders whose sampler needs
``set_epoch`` every epoch.

A sampler is distributed when it is built as one (``DistributedSampler(ds)``), chosen as one
on some path (``RandomSampler(ds) if args.local_rank == -1 else DistributedSampler(ds)``,
``DistributedSampler(ds) if is_ddp else None``), held by a name bound to such a value, or
returned by a function of this file or of the project that builds one
(``data_sampler(dataset, distributed=args.distributed)``). A loader is such a loader when its
``DataLoader(...)`` call takes such a sampler, or when a project helper returns it
(``train_loader, test_loader = get_loader(args)`` with ``get_loader`` in ``utils/data_utils.py``:
``Helper.sharded_loaders``). References are matched by their text, file-wide: a loop may come
before the code that builds its loader (a ``train()`` defined above ``main()``)."""

from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.analysis.batch_calls import DATALOADERS
from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code, is_simple_reference, keyword_value

SAMPLERS = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
# A test of how the run is launched (``args.distributed``, ``world_size > 1``, ``is_ddp``).
_LAUNCH_TEST = re.compile(r"distrib|ddp|world|gpus|multi|nproc|replicas|is_initialized|is_available", re.I)
BATCH_SAMPLERS = frozenset({"torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"})


class Samplers:
    """The distributed samplers and the loaders of one file, by reference text."""

    def __init__(self, source: Source) -> None:
        self.source = source

    @functools.cached_property
    def _bindings(self) -> list[tuple[str, cst.BaseExpression]]:
        """``(target, value)`` of every single-target binding to a call or a conditional value."""
        found: list[tuple[str, cst.BaseExpression]] = []
        for assign in self.source.of_types(cst.Assign):
            assert isinstance(assign, cst.Assign)
            if len(assign.targets) == 1 and is_simple_reference(assign.targets[0].target):
                if isinstance(assign.value, (cst.Call, cst.IfExp)):
                    found.append((code(assign.targets[0].target), assign.value))
        return found

    @functools.cached_property
    def samplers(self) -> frozenset[str]:
        """The references bound to a distributed sampler on some path (``train_sampler``)."""
        return frozenset(target for target, value in self._bindings if self.is_distributed(value, frozenset()))

    @functools.cached_property
    def _loader_calls(self) -> dict[str, list[cst.Call]]:
        found: dict[str, list[cst.Call]] = {}
        for target, value in self._bindings:
            for call in _branches(value):
                if isinstance(call, cst.Call) and self.source.qualified(call) & DATALOADERS:
                    found.setdefault(target, []).append(call)
        return found

    @functools.cached_property
    def _helper_results(self) -> list[tuple[cst.BaseExpression, tuple[int, ...]]]:
        """``(target, sharded slots)`` of every assignment of a project helper's result that
        holds a loader with a distributed sampler."""
        found: list[tuple[cst.BaseExpression, tuple[int, ...]]] = []
        for assign in self.source.of_types(cst.Assign):
            assert isinstance(assign, cst.Assign)
            if isinstance(assign.value, cst.Call) and len(assign.targets) == 1:
                helper = self.source.project.helper(assign.value)
                if helper is not None and helper.sharded_loaders:
                    found.append((assign.targets[0].target, helper.sharded_loaders))
        return found

    @functools.cached_property
    def loaders(self) -> dict[str, cst.BaseExpression | None]:
        """The references holding a loader with a distributed sampler, each with the
        ``sampler=`` value it is built with (None: built elsewhere, by a project helper)."""
        found: dict[str, cst.BaseExpression | None] = {}
        for target, calls in self._loader_calls.items():
            for call in calls:
                sampler = self.sampler_of(call)
                if sampler is not None and self.is_distributed(sampler, self.samplers):
                    found.setdefault(target, sampler)
        for result, slots in self._helper_results:
            for key in _elements(result, slots):
                found.setdefault(key, None)
        return found

    @functools.cached_property
    def plain(self) -> frozenset[str]:
        """The references holding a loader built without a distributed sampler on some path,
        and the other elements of a project helper's result that holds one (``test_loader``)."""
        built = {
            target
            for target, calls in self._loader_calls.items()
            if any(not self.is_distributed(self.sampler_of(call), self.samplers) for call in calls)
        }
        others = {key for target, slots in self._helper_results for key in _elements(target, (-1,)) if key not in _elements(target, slots)}
        return frozenset(built | others)

    def shuffles(self, loader: str) -> bool:
        """``loader``'s distributed sampler shuffles on some path (not ``shuffle=False``
        everywhere): only then does its order depend on ``set_epoch``."""
        sampler = self.loaders.get(loader)
        if sampler is None:
            return True
        values = [v for _, v in self.source.assignments.get(code(sampler), [])] if is_simple_reference(sampler) else [sampler]
        calls = [
            c for v in values if v is not None for c in _branches(v) if isinstance(c, cst.Call) and self.source.qualified(c) & SAMPLERS
        ]
        return not calls or any(not _is_false(keyword_value(c, "shuffle")) for c in calls)

    def sampler_of(self, loader: cst.Call) -> cst.BaseExpression | None:
        """The sampler a ``DataLoader(...)`` call draws through: its ``sampler=``, or the sampler
        inside its ``batch_sampler=`` (``BatchSampler(train_sampler, batch_size, drop_last)``,
        built there or bound to a name)."""
        sampler = keyword_value(loader, "sampler")
        batches = keyword_value(loader, "batch_sampler")
        if sampler is not None or batches is None:
            return sampler
        values = [v for _, v in self.source.assignments.get(code(batches), [])] if is_simple_reference(batches) else [batches]
        inner = [_batched(v) for v in values if isinstance(v, cst.Call) and self.source.qualified(v) & BATCH_SAMPLERS]
        return next((i for i in inner if i is not None and self.is_distributed(i, self.samplers)), inner[0] if inner else None)

    def is_distributed(self, value: cst.BaseExpression | None, samplers: frozenset[str]) -> bool:
        """``value`` is a distributed sampler on some path (``samplers``: the names known to hold one)."""
        if value is None:
            return False
        if is_simple_reference(value):
            return code(value) in samplers
        return any(isinstance(c, cst.Call) and (self.source.qualified(c) & SAMPLERS or self._factory(c)) for c in _branches(value))

    def _factory(self, call: cst.Call) -> bool:
        """A function of this file or of the project's modules that returns a distributed
        sampler on some path."""
        helper = self.source.project.helper(call)
        if helper is not None:
            return helper.returns_sampler
        func = call.func
        callee = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if callee not in self._sampler_returners:
            return False  # asked per call: 600 same-named methods would each be read per call
        return any(function in self._sampler_returners[callee] for function in self.source.functions_called(call))

    @functools.cached_property
    def _sampler_returners(self) -> dict[str, frozenset[cst.FunctionDef]]:
        """The file's functions that return a distributed sampler, by name (read once)."""
        found = {name: frozenset(f for f in functions if self.returns_sampler(f)) for name, functions in self.source.functions.items()}
        return {name: functions for name, functions in found.items() if functions}

    def returns_sampler(self, function: cst.FunctionDef) -> bool:
        """``function`` returns a distributed sampler built in its return statement on some path."""
        returns = [r for r in self.source.of_types_in(function, cst.Return) if isinstance(r, cst.Return) and r.value is not None]
        return any(
            isinstance(c, cst.Call) and self.source.qualified(c) & SAMPLERS
            for r in returns
            if r.value is not None
            for c in _branches(r.value)
        )

    def returned_loaders(self, function: cst.FunctionDef) -> tuple[int, ...]:
        """The elements of ``function``'s result that are loaders with a distributed sampler
        (-1: the whole result): ``return train_loader, test_loader`` -> ``(0,)``, ``return
        DataLoader(ds, sampler=DistributedSampler(ds))`` -> ``(-1,)``."""
        found: set[int] = set()
        for ret in self.source.of_types_in(function, cst.Return):
            if ret.value is not None:
                found.update(self._sharded_elements(ret.value))
        return tuple(sorted(found))

    def _sharded_elements(self, value: cst.BaseExpression) -> set[int]:
        if isinstance(value, cst.Tuple):
            return {i for i, e in enumerate(value.elements) if self.is_sharded_loader(e.value)}
        return {-1} if self.is_sharded_loader(value) else set()

    def padded_loaders(self, function: cst.FunctionDef) -> tuple[int, ...]:
        """The elements of ``returned_loaders`` whose sampler pads the data with repeated samples
        up to a multiple of the world size: those of each return for which every
        ``DistributedSampler`` the function builds keeps ``drop_last`` at False and is built under
        tests of the launch only (``if args.distributed:``, ``if dist.is_initialized():``) besides
        the tests around that return itself (``if is_train: ... return train_loader, val_loader``).
        A sampler built under another test of what the caller passes (``if shuffle:``) may never
        be the one a loader gets."""
        samplers = [
            c for c in self.source.of_types_in(function, cst.Call) if isinstance(c, cst.Call) and self.source.qualified(c) & SAMPLERS
        ]
        if any((d := keyword_value(c, "drop_last")) is not None and not _is_false(d) for c in samplers):
            return ()  # True, or a parameter's: no padding, or not known
        found: set[int] = set()
        for ret in self.source.of_types_in(function, cst.Return):
            assert isinstance(ret, cst.Return)
            shared = {id(test) for test in self._tests_around(ret, function)}
            choosing = [t for c in samplers for t in self._tests_around(c, function) if id(t) not in shared]
            if ret.value is not None and all(_LAUNCH_TEST.search(code(test)) for test in choosing):
                found.update(self._sharded_elements(ret.value))
        return tuple(sorted(found))

    def _tests_around(self, node: cst.CSTNode, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        """The tests of the ``if`` statements and conditional expressions ``node`` runs under,
        inside ``function``."""
        tests: list[cst.BaseExpression] = []
        child, parent = node, self.source.parent(node)
        while parent is not None and parent is not function:
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                tests.append(parent.test)
            child, parent = parent, self.source.parent(parent)
        return tests

    def made_sharded(self, node: cst.CSTNode, slot: int | str | None) -> bool:
        """``node`` (where a value is made: ``ddpify.analysis.values.Origin``), or its element
        ``slot``, is a loader with a distributed sampler: built here with one, or returned by a
        project helper that builds one (``from_path(..., is_distributed=True)``)."""
        if not isinstance(node, cst.BaseExpression):
            return False
        helper = self.source.project.helper(node) if isinstance(node, cst.Call) else None
        if helper is not None and (-1 in helper.sharded_loaders or slot in helper.sharded_loaders):
            return True
        return slot is None and self.is_sharded_loader(node)

    def is_sharded_loader(self, value: cst.BaseExpression) -> bool:
        """A reference to a loader with a distributed sampler, or such a loader built right
        there (``return DataLoader(ds, sampler=sampler)``)."""
        if code(value) in self.loaders:
            return True
        calls = [c for c in _branches(value) if isinstance(c, cst.Call) and self.source.qualified(c) & DATALOADERS]
        return any(self.is_distributed(self.sampler_of(c), self.samplers) for c in calls)

    @functools.cached_property
    def sharded_parameters(self) -> frozenset[tuple[cst.FunctionDef, str]]:
        """``(function, parameter)`` pairs that a call of this file hands a loader with a
        distributed sampler (``validate(model, val_loader)``, ``self.evaluate(self.val_loader)``);
        only the calls with such an argument are followed, each to the functions of its name."""
        found: set[tuple[cst.FunctionDef, str]] = set()
        for call in self.source.of_types(cst.Call):
            assert isinstance(call, cst.Call)
            handed = [(i, a) for i, a in enumerate(call.args) if not a.star and self.is_sharded_loader(a.value)]
            for function in self.source.functions_called(call) if handed else ():
                params = [*function.params.posonly_params, *function.params.params]
                bound = 1 if self.source.is_method(function) else 0  # `self` is bound by the call
                for index, arg in handed:
                    if arg.keyword is not None:
                        found.add((function, arg.keyword.value))
                    elif index + bound < len(params):
                        found.add((function, params[index + bound].name.value))
        return frozenset(found)


def _batched(call: cst.Call) -> cst.BaseExpression | None:
    """The sampler a ``BatchSampler(sampler, batch_size, drop_last)`` groups into batches."""
    value = keyword_value(call, "sampler")
    if value is None and call.args and call.args[0].keyword is None and not call.args[0].star:
        value = call.args[0].value
    return value


def _branches(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values ``value`` may take: both sides of a conditional expression, recursively."""
    if isinstance(value, cst.IfExp):
        return [*_branches(value.body), *_branches(value.orelse)]
    return [value]


def _is_false(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"


def _elements(target: cst.BaseExpression, slots: tuple[int, ...]) -> list[str]:
    """The plain references of ``target`` that receive the result's ``slots`` (-1: all of it,
    each element of a tuple target)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        every = -1 in slots
        return [code(e.value) for i, e in enumerate(target.elements) if (every or i in slots) and is_simple_reference(e.value)]
    return [code(target)] if -1 in slots and is_simple_reference(target) else []
