"""Batch sources and where their batches go: the only definition of "training loader" and
"evaluation loader" that the converter and the linter share.

A batch source is a ``DataLoader(...)`` (one per literal key when built in a dict
comprehension), an iterator the file defines (a class with ``__iter__``/``__next__``, a
generator, a ``get_batch()`` that slices data, a prefetcher: ``handouts``), random index
sampling that selects data (``data[torch.randint(...)]``), a project object whose method hands
out the training batches, or anything else a training loop iterates. Its batches are followed (``Values.flow``) into loops, ``next()``, the file's
functions, ``self.`` attributes and containers. A loop TRAINS when a value computed from its
batch reaches ``.backward()`` (also in a function it hands the batch to); it EVALUATES under
``no_grad``/``inference_mode`` or after ``.eval()``, with no backward. A source is TRAIN when
any of its loops trains, EVAL when all evaluate, UNKNOWN otherwise (names decide nothing).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import libcst as cst

from ddpify.analysis.batch_calls import DATALOADERS, counts, loader_inner, loader_step, next_taken
from ddpify.analysis.batches import Batches, Constants, Reach, iterated_parameter
from ddpify.analysis.handouts import handing_out, project_object_handing_out
from ddpify.analysis.loops import drawn_for_a_split
from ddpify.analysis.role_hints import name_hint
from ddpify.analysis.source import Source
from ddpify.analysis.sources import RANDOM, BatchSource, Consumer, Kind, Role, Use
from ddpify.analysis.spellings import spelling
from ddpify.analysis.values import ANY, Edge, Occurrence, Slot, Values, comprehension_keys, held_spelling
from ddpify.tree import cstutil
from ddpify.tree.spans import Spans

__all__ = ["BatchSource", "Consumer", "DataFlow", "Kind", "Role", "Use"]


class DataFlow:
    """The batch sources of one file, computed on first use."""

    def __init__(self, source: Source, values: Values | None = None) -> None:
        self.source = source
        self.values = values or Values(source)
        self.batches = Batches(self.values)
        self._spans: dict[cst.CSTNode, list[tuple[int, int]]] = {}
        self._consumers: dict[tuple, Consumer] = {}
        self._by_node: dict[cst.CSTNode, list[BatchSource]] = {}
        self._by_name: dict[str, list[BatchSource]] = {}
        self._yielding: dict[cst.CSTNode, cst.FunctionDef] = {}  # loops of generators that yield their batches
        self._passthrough: set[cst.FunctionDef] = set()  # generators that pass a source's batches on

    # ------------------------------------------------------------------ queries
    @functools.cached_property
    def sources(self) -> list[BatchSource]:
        found: list[BatchSource] = []
        for call in self._loader_calls():
            for start, slot in self._starts(call):
                found.append(self._make(Kind.DATALOADER, call, self._flows([(start, slot)]), slot))
        found += self._random_indexes(found)
        found += self._producers()
        found += self._from_training_loops(found)
        found.sort(key=lambda s: (s.line, str(s.key)))
        return found

    def sources_of(self, what: cst.CSTNode | str) -> list[BatchSource]:
        """The sources a node is (a ``DataLoader`` call, a class...) or holds (any expression
        that evaluates to one), or that a spelling names (``"loaders['train']"``)."""
        sources = self.sources
        if isinstance(what, str):
            try:
                key = spelling(cst.parse_expression(what))
            except cst.ParserSyntaxError:
                return []
            return list(self._by_name.get(key or what, []))
        return [s for s in sources if s.node is what] or list(self._by_node.get(what, []))

    def role_of(self, what: cst.CSTNode | str) -> Role:
        """TRAIN / EVAL when every source ``what`` may be agrees; UNKNOWN otherwise."""
        roles = {s.role for s in self.sources_of(what)}
        return roles.pop() if len(roles) == 1 else Role.UNKNOWN

    def on_training_path(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` runs while batches are trained on: in a loop that trains (from the
        batch on), in a function such a loop hands a batch to, or in a loop around a backward."""
        return self.values.start(node) in self._training_spans

    def trains_during(self, source: BatchSource, node: cst.CSTNode) -> bool:
        """Whether ``node`` runs while ``source``'s batches are trained on: in one of its
        training loops (from the batch on), or in a function such a loop hands a batch to."""
        position = self.values.start(node)
        spans = [span for c in source.consumers if c.use is Use.TRAINING for span in self._spans.get(c.node, [])]
        return any(start <= position < end for start, end in spans)

    @functools.cached_property
    def _training_spans(self) -> Spans:
        spans = Spans(span for s in self.sources for c in s.consumers if c.use is Use.TRAINING for span in self._spans.get(c.node, []))
        for loop in self._training_loop_candidates():
            spans.add(self.values.start(loop.body), self.values.end(loop.body))
        for call in self.source.calls_by_callee.get("backward", []):  # update(agent, batch) called in such a loop
            function = self.source.enclosing_function(call)
            called_in_loops = function is not None and any(self._loops_around(c) for c, _ in self.values.callers(function))
            if called_in_loops and function is not None and not self._loops_around(call):
                spans.add(self.values.start(function), self.values.end(function))
        return spans

    # ------------------------------------------------------------------ sources
    def _loader_calls(self) -> list[cst.Call]:
        """``DataLoader(...)`` however it is imported or aliased."""
        callees = {"DataLoader", "distributed_loader"}
        for alias in self.source.of_types(cst.ImportAlias):
            if alias.asname is not None and cstutil.code(alias.name).split(".")[-1] in callees:
                callees.add(cstutil.code(alias.asname.name))
        calls = [c for name in callees for c in self.source.calls_by_callee.get(name, [])]
        return sorted((c for c in calls if self.source.qualified(c.func) & DATALOADERS), key=self.values.start)

    def _starts(self, call: cst.Call) -> list[tuple[cst.CSTNode, Slot]]:
        """Where each loader ``call`` makes begins: itself, or each literal key of the dict
        comprehension it builds (``{x: DataLoader(...) for x in ["train", "val"]}``)."""
        parent = self.source.parent(call)
        if isinstance(parent, cst.DictComp) and parent.value is call:
            keys = comprehension_keys(parent)
            return [(parent, key) for key in keys] if keys else [(parent, ANY)]
        if isinstance(parent, (cst.ListComp, cst.GeneratorExp, cst.SetComp)) and parent.elt is call:
            return [(parent, ANY)]
        return [(call, None)]

    def _flows(self, starts: Sequence[tuple[cst.CSTNode, Slot]]) -> list[tuple[Occurrence, Slot]]:
        return [(o, slot) for start, slot in starts for o in self.values.flow(start, slot, outer=loader_step).occurrences]

    def _producers(self) -> list[BatchSource]:
        """Iterator classes (``__iter__``/``__next__``) and generator functions of the file
        whose products are iterated, not handed to a ``DataLoader`` (then they are datasets)."""
        found: list[BatchSource] = []
        for klass in self.source.of_types(cst.ClassDef):
            assert isinstance(klass, cst.ClassDef)
            if self.values.method(klass, "__iter__") or self.values.method(klass, "__next__"):
                calls = [c for c in self.source.calls_by_callee.get(klass.name.value, []) if self.values.class_called(c) is klass]
                found += self._produced(klass, calls, {Use.TRAINING, Use.EVALUATION})
        generators = {self.source.enclosing_function(y) for y in self.source.of_types(cst.Yield)}
        generators -= self._passthrough
        for function in sorted((g for g in generators if g is not None and not g.name.value.startswith("__")), key=self.values.start):
            passed = iterated_parameter(self.source, self.values, function)
            if passed is not None:
                found += self._passed_parameter(function, passed)
            else:
                found += self._produced(function, [c for c, _ in self.values.callers(function)], {Use.TRAINING})
        return found

    def _passed_parameter(self, function: cst.FunctionDef, param: cst.Param) -> list[BatchSource]:
        """A generator passing on a parameter's batches that training takes (kind UNKNOWN): the source
        is where the value comes from (the caller's parameter, an attribute...), not shown here."""
        flows = self._flows([(param.name, None)])
        consumers = self._consumers_of(flows)
        if not any(c.use is Use.TRAINING for c in consumers):
            return []
        origins = self.values.origins(param.name, inner=loader_inner)
        origin = origins[0].node if len(origins) == 1 else param.name
        note = f"; {self.values.name_of(function)}() passes on the batches of {cstutil.code(origin)[:60]} (line {self.source.line(origin)}), which this file does not show"
        return [self._source(Kind.UNKNOWN, origin, consumers, flows, origins[0].slot if len(origins) == 1 else None, note)]

    def _produced(self, producer: cst.CSTNode, calls: list[cst.Call], needed: set[Use]) -> list[BatchSource]:
        flows = self._flows([(c, None) for c in calls])
        if any(self._loader_argument(o.node) for o, _ in flows):
            return []
        source = self._make(Kind.CUSTOM_ITERATOR, producer, flows, None)
        return [source] if any(c.use in needed for c in source.consumers) else []

    def _random_indexes(self, known: list[BatchSource]) -> list[BatchSource]:
        """``ix = torch.randint(...)`` that selects data (``data[ix]``): one source per call,
        consumed where its batch is used (where ``get_batch()`` is called when it is returned)."""
        found: list[BatchSource] = []
        calls = [c for name in sorted({q.rsplit(".", 1)[1] for q in RANDOM}) for c in self.source.calls_by_callee.get(name, [])]
        for call in sorted(calls, key=self.values.start):
            if not self.source.qualified(call.func) & RANDOM:
                continue
            loop, statements = self._region(call)
            reach = self.batches.reach(statements, seeds=(call,))
            if not reach.indexes or loop is None and not (reach.returns or reach.yields) and drawn_for_a_split(self.source, call):
                continue
            function = self.source.enclosing_function(call)
            callers = self.values.callers(function) if function is not None and loop is None and reach.returns else []
            if function is not None and reach.yields and self.values.is_generator(function):
                consumers = self._passed_on(function, 0)  # every call: the randomness is the generator's own
            elif callers:
                consumers = [self._single(c, (Edge("return", c),)) for c, _ in callers]
            else:
                consumers = [self._classify(loop or call, statements, frozenset(), (call,), [loop or call], {}, None, reach)]
            spans = Spans(span for s in known for c in s.consumers for span in self._spans.get(c.node, []))
            sites = [c for c, _ in callers] or [call]
            if all(self.values.start(site) in spans for site in sites):
                continue  # it reorders the batch another source gave (mixup: x[torch.randperm(n)])
            if any(c.use is not Use.UNKNOWN for c in consumers):  # else nothing shows it makes batches
                found.append(self._source(Kind.RANDOM_INDEX, call, consumers, [], None))
        return found

    def _from_training_loops(self, known: list[BatchSource]) -> list[BatchSource]:
        """Training loops no known source feeds: what they iterate (kind UNKNOWN), or the
        ``get_batch()`` of the file that a counting loop takes its batches from (data sliced by
        its parameters, returned: kind CUSTOM_ITERATOR)."""
        consumed = {c.node for s in known for c in s.consumers}
        spans = Spans(span for s in known for c in s.consumers for span in self._spans.get(c.node, []))
        known_nodes = [s.node for s in known]
        made_here: list[tuple[cst.CSTNode, Slot]] = []
        found: list[BatchSource] = []
        for loop in self._training_loop_candidates(spans):  # first what loops iterate, inner loops included
            start = self.values.start(loop)
            if loop in consumed or start in spans or not isinstance(loop, cst.For) or counts(self.source, loop.iter):
                continue
            if self.values.feeds_inner_loops(loop, inner=loader_inner):
                continue  # `for dataset in tasks: loader = make_loader(dataset)`: its items are no batches
            consumer = self._loop(loop, Occurrence(loop.iter), None)
            origins = self.values.origins(loop.iter, inner=loader_inner)
            single = len(origins) == 1 and origins[0].known
            origin, slot = (origins[0].node, origins[0].slot) if single else (loop.iter, None)
            if consumer is None or consumer.use is not Use.TRAINING or origin in known_nodes or (origin, slot) in made_here:
                continue
            made_here.append((origin, slot))
            made = "built by" if origin is not loop.iter else "iterated as"
            note = f"; it is {made} {cstutil.code(origin)[:60]} (line {self.source.line(origin)}), which this file does not show"
            found.append(self._source(Kind.UNKNOWN, origin, [consumer], [(Occurrence(loop.iter), None)], slot, note))
            spans.update(self._spans.get(consumer.node, []))
        for loop in self._training_loop_candidates(spans):  # then counting loops: a get_batch() they call
            start = self.values.start(loop)
            if loop in consumed or start in spans or (isinstance(loop, cst.For) and not counts(self.source, loop.iter)):
                continue
            taken = self._taken_by_next(loop, made_here)
            found += taken
            for assign in [] if taken else cstutil.of_types(loop.body, cst.Assign):
                batch = self._batch_function(assign.value, known_nodes)
                if batch is not None:
                    consumers = [self._single(c, ()) for c, _ in self.values.callers(batch)]
                    found.append(self._source(Kind.CUSTOM_ITERATOR, batch, consumers, [], None))
                    known_nodes.append(batch)
                    break
                maker = project_object_handing_out(self.values, assign.value, known_nodes)
                if maker is not None and (use := self._single(maker[0], ())).use is Use.TRAINING:  # obj.get_batch()
                    found.append(self._source(Kind.UNKNOWN, maker[1], [use], [(Occurrence(maker[1]), None)], None, maker[2]))
                    known_nodes.append(maker[1])
                    break
        return found

    def _taken_by_next(self, loop: cst.For | cst.While, made_here: list[tuple[cst.CSTNode, Slot]]) -> list[BatchSource]:
        """``next(data_iter)`` in a counting loop, ``data_iter = iter(self.data_loader)`` over a
        loader this file does not show (a parameter, an attribute set from one): kind UNKNOWN."""
        found: list[BatchSource] = []
        for call in self.source.of_types_in(loop.body, cst.Call):
            taken = next_taken(self.source, call)
            if taken is None:
                continue
            origins = self.values.origins(taken, inner=loader_inner)
            if len(origins) != 1 or origins[0].known or (origins[0].node, origins[0].slot) in made_here:
                continue
            consumer = self._single(call, ())
            if consumer.use is Use.TRAINING:
                origin = origins[0].node
                made_here.append((origin, origins[0].slot))
                note = f"; it is taken by {cstutil.code(call)[:60]} from {cstutil.code(origin)[:60]} (line {self.source.line(origin)}), which this file does not show"
                found.append(
                    self._source(Kind.UNKNOWN, origin, [consumer], [(Occurrence(call.args[0].value), None)], origins[0].slot, note)
                )
        return found

    def _batch_function(self, value: cst.BaseExpression, known: list[cst.CSTNode]) -> cst.FunctionDef | None:
        """The file's function ``value`` calls when it returns data sliced by its parameters
        (``return source[i : i + n]``) and that batch reaches backward here."""
        if not isinstance(value, cst.Call):
            return None
        for function, implicit in self.values.callees(value):
            if function.name.value == "__init__" or self.values.is_generator(function) or function in known:
                continue
            if any(self.values.inside(k, function) for k in known):
                continue
            params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params][implicit:]
            reach = self.batches.function_reach(function, frozenset(p.name.value for p in params))
            if reach.indexes and reach.returns and self._single(value, ()).use is Use.TRAINING:
                return function
        return None

    def _training_loop_candidates(self, explained: Spans | None = None) -> list[cst.For | cst.While]:
        """Loops around a ``backward()`` call, or a call of the function that holds it; not for
        one inside ``explained`` spans (a known source's loop: the epoch loop around it is none)."""
        unexplained = lambda node: explained is None or self.values.start(node) not in explained  # noqa: E731

        loops: list[cst.For | cst.While] = []
        for call in [c for c in self.source.calls_by_callee.get("backward", []) if unexplained(c)]:
            around = self._loops_around(call)
            if not around and (function := self.source.enclosing_function(call)) is not None:
                around = [loop for c, _ in self.values.callers(function) if unexplained(c) for loop in self._loops_around(c)]
            loops += around
        return sorted(dict.fromkeys(loops), key=self.values.start)

    def _loops_around(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        found = []
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)) and self.values.inside(node, ancestor.body):
                found.append(ancestor)
            elif isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                break
        return found

    # ------------------------------------------------------------------ consumers
    def _make(self, kind: Kind, node: cst.CSTNode, flows: list[tuple[Occurrence, Slot]], key: Slot) -> BatchSource:
        return self._source(kind, node, self._consumers_of(flows), flows, key)

    def _consumers_of(self, flows: list[tuple[Occurrence, Slot]], depth: int = 0) -> list[Consumer]:
        """The loops and ``next()`` calls that take the batches; a loop of a generator that
        yields them stands for the consumers of that generator's products."""
        consumers: list[Consumer] = []
        for occurrence, slot in flows:
            parent = self.source.parent(occurrence.node)
            found: Consumer | None = None
            if isinstance(parent, cst.For) and parent.iter is occurrence.node:
                found = self._loop(parent, occurrence, slot)
            elif isinstance(parent, (cst.Arg, cst.Attribute)) and isinstance(call := self.source.parent(parent), cst.Call):
                if next_taken(self.source, call) is occurrence.node:  # next(it), it.__next__()
                    found = self._single(call, occurrence.trail)
            more = [found] if found is not None else []
            if found is not None and found.use is Use.UNKNOWN and isinstance(found.node, cst.Call) and depth < 3:
                more = self._returned_to_callers(found.node) or more
            if found is not None and found.node in self._yielding and depth < 3:
                generator = self._yielding[found.node]
                entered = self.values.entered_through(occurrence.trail)  # the call that gave it these batches
                more = self._passed_on(generator, depth, entered if entered in self._calls_of(generator) else None)
            consumers += [c for c in more if all(c.node is not known.node for known in consumers)]
        return consumers

    def _passed_on(self, generator: cst.FunctionDef, depth: int, call: cst.Call | None = None) -> list[Consumer]:
        """Consumers of what ``generator`` yields (``def cycle(dl): while True: yield from ...``):
        of ``call``'s products, or of every call's."""
        self._passthrough.add(generator)
        calls = [call] if call is not None else self._calls_of(generator)
        return self._consumers_of(self._flows([(c, None) for c in calls]), depth + 1)

    def _returned_to_callers(self, call: cst.Call) -> list[Consumer]:
        """A batch ``next(self.it)`` takes and its function hands out (``handouts``)."""
        loop, statements = self._region(call)
        functions = handing_out(self.values, self.batches, call, statements) if loop is None else []
        return [self._single(c, ()) for f in functions for c in self._calls_of(f)]

    def _calls_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        return [c for c, _ in self.values.callers(function)]

    def _loop(self, loop: cst.For, occurrence: Occurrence, slot: Slot) -> Consumer | None:
        """A ``for`` over the batches: its target holds one (not the index of ``enumerate``)."""
        constants: dict[str, str | int] = {}
        key = occurrence.key
        if key is not None:
            choices = self.values.key_choices(key)
            if choices is not None and slot not in (None, ANY):
                if slot not in choices:
                    return None  # for phase in ["train"]: loaders[phase] never reads "val"
                constants = {key.value: slot}  # type: ignore[attr-defined]
                key = None
        target: cst.BaseExpression = loop.target
        if isinstance(loop.iter, cst.Call) and "builtins.enumerate" in self.source.qualified(loop.iter.func):
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                target = target.elements[1].value
        names = frozenset(n.value for n in cstutil.of_types(target, cst.Name))
        sites = [loop, *reversed([e.site for e in occurrence.trail if e.kind == "enter"])]
        body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else [loop.body]
        return self._classify(loop, body, names, (), sites, constants, cstutil.code(key) if key is not None else None)

    def _single(self, call: cst.Call, trail: tuple[Edge, ...]) -> Consumer:
        """One batch handed out by ``call`` (``next(it)``, ``get_batch()``): used from there to
        the end of the loop (or function) around it."""
        loop, statements = self._region(call)
        inline = self.batches.argument_without_grad(call)
        if inline is not None:  # model(next(val_loader)) under no_grad: nothing made from it has gradients
            line = self.source.line(call)
            return Consumer(loop or call, Use.EVALUATION, f"its batch taken at line {line} is used right there, {inline}", line, (), None)
        sites = [loop or call, *reversed([e.site for e in trail if e.kind == "enter"])]
        return self._classify(loop or call, statements, frozenset(), (call,), sites, {}, None)

    def _region(self, node: cst.CSTNode) -> tuple[cst.For | cst.While | None, list[cst.CSTNode]]:
        """The innermost loop around ``node`` (None: its function or the module), and the
        statements of that body from the one holding ``node`` on (in a loop, then those before
        it: a batch fetched at the end of one pass is used in the next)."""
        loop: cst.For | cst.While | None = None
        block: cst.CSTNode = self.source.module
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)) and self.values.inside(node, ancestor.body):
                loop, block = ancestor, ancestor.body
                break
            if isinstance(ancestor, cst.FunctionDef):
                block = ancestor.body
                break
        statements: list[cst.CSTNode] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else [block]
        index = next((i for i, s in enumerate(statements) if self.values.inside(node, s)), 0)
        return loop, statements[index:] + (statements[:index] if loop is not None else [])

    def _classify(
        self,
        node: cst.CSTNode,
        statements: Sequence[cst.CSTNode],
        names: frozenset[str],
        seeds: tuple[cst.CSTNode, ...],
        sites: list[cst.CSTNode],
        constants: Constants,
        key: str | None,
        reach: Reach | None = None,
    ) -> Consumer:
        memo = (node, names, seeds, tuple(sorted(constants.items())), key)
        found = self._consumers.get(memo)
        if found is not None:
            return found
        reach = reach or self.batches.reach(statements, names, seeds, constants)
        function = self.source.enclosing_function(node)
        if reach.yields and function is not None and self.values.is_generator(function):
            self._yielding[node] = function
        line = self.source.line(node)
        what = "its loop at line" if isinstance(node, (cst.For, cst.While)) else "its batch taken at line"
        if reach.backward is not None:
            backward = reach.backward
            function = self.source.enclosing_function(backward)
            where = f" in {self.values.name_of(function)}()" if function is not None and function in reach.functions else ""
            called = cstutil.code(backward.func)
            called = called if len(called) <= 40 else "backward"  # not a cut expression
            evidence = f"its batches reach {called}() at line {self.source.line(backward)}{where}"
            found = Consumer(node, Use.TRAINING, evidence, line, reach.functions, key)
            spans = [(min(map(self.values.start, statements)), max(map(self.values.end, statements)))] if statements else []
            self._spans.setdefault(node, []).extend(spans + [(self.values.start(f), self.values.end(f)) for f in reach.functions])
        elif (
            why := self.batches.context(sites, constants, None if isinstance(node, (cst.For, cst.While)) else statements[-1])
        ) is not None:
            found = Consumer(node, Use.EVALUATION, f"{what} {line} runs {why}, and no backward() follows", line, reach.functions, key)
        elif reach.no_grad is not None:
            guard = cstutil.code(reach.no_grad.items[0].item)
            evidence = f"its batches are used under {guard} at line {self.source.line(reach.no_grad)}, and no backward() follows"
            found = Consumer(node, Use.EVALUATION, evidence, line, reach.functions, key)
        else:
            evidence = f"{what} {line} reaches no backward() and runs without no_grad/inference_mode or eval()"
            found = Consumer(node, Use.UNKNOWN, evidence, line, reach.functions, key)
        self._consumers[memo] = found
        return found

    def _loader_argument(self, node: cst.CSTNode) -> bool:
        parent = self.source.parent(node)
        call = self.source.parent(parent) if isinstance(parent, cst.Arg) else None
        return isinstance(call, cst.Call) and bool(self.source.qualified(call.func) & DATALOADERS)

    # ------------------------------------------------------------------ results
    def _source(
        self, kind: Kind, node: cst.CSTNode, consumers: list[Consumer], flows: list[tuple[Occurrence, Slot]], key: Slot, note: str = ""
    ) -> BatchSource:
        role, evidence = self._role(consumers, [o for o, _ in flows])
        held = [o for o, _ in flows] + [
            Occurrence(t.target) for o, _ in flows if isinstance(a := self.source.parent(o.node), cst.Assign) for t in a.targets
        ]
        names = tuple(dict.fromkeys(n for o in held if (n := held_spelling(o, key)) is not None))
        hinted, hint_reason = name_hint(names, key, node)
        hint = Role(hinted) if hinted is not None else None
        line, key = self.source.line(node), None if key == ANY else key
        found = BatchSource(node, kind, role, evidence + note, line, tuple(consumers), key, names, hint, hint_reason)
        for occurrence, _ in flows:
            self._by_node.setdefault(occurrence.node, []).append(found)
        for name in names:
            self._by_name.setdefault(name, []).append(found)
        return found

    def _role(self, consumers: list[Consumer], occurrences: list[Occurrence]) -> tuple[Role, str]:
        training = [c for c in consumers if c.use is Use.TRAINING]
        decided = [c for c in training if c.key is None]
        if decided:
            return Role.TRAIN, decided[0].evidence
        if training:
            first = training[0]
            return Role.UNKNOWN, f"its batches reach backward() only through a key chosen at run time ({first.key}, line {first.line})"
        if consumers and all(c.use is Use.EVALUATION for c in consumers):
            return Role.EVAL, consumers[0].evidence
        if consumers:
            return Role.UNKNOWN, next(c.evidence for c in consumers if c.use is not Use.EVALUATION)
        for occurrence in occurrences:
            parent = self.source.parent(occurrence.node)
            call = self.source.parent(parent) if isinstance(parent, cst.Arg) else None
            if isinstance(call, cst.Call) and not self.values.callees(call) and not self._loader_argument(occurrence.node):
                return (
                    Role.UNKNOWN,
                    f"no loop over its batches in this file: it is handed to {cstutil.code(call.func)}() at line {self.source.line(call)}, defined elsewhere",
                )
        return Role.UNKNOWN, "no loop over its batches in this file"
