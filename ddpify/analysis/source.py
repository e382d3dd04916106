"""``Source``: the questions every analysis asks of one module, answered from one metadata
wrapper (``ddpify.tree.metadata.FastMetadata``): qualified names, parents, lines, the
enclosing function, the file's own functions and their call sites.

Every analysis module reads the code through this one object, so the converter's planners and
the linter's rules, which both build it from the same wrapper, see the same facts."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider, QualifiedNameSource

from ddpify.analysis.budget import Budget
from ddpify.analysis.name_calls import NameCalls
from ddpify.tree import cstutil

if TYPE_CHECKING:
    from pathlib import Path

    from ddpify.analysis.project import Helper, Project

Scope = cst.Module | cst.FunctionDef
N = TypeVar("N", bound=cst.CSTNode)
_OPEN = frozenset({"builtins.open", "io.open"})


class Source:
    """One module and its metadata, with the queries the analyses share (cached per node
    where a query is asked repeatedly)."""

    def __init__(self, wrapper: MetadataWrapper, project: Project | None = None) -> None:
        """``project``: the helpers of the project modules the file imports (none without)."""
        self.wrapper = wrapper
        self.module = wrapper.module
        self._project = project
        self._qualified = wrapper.resolve(QualifiedNameProvider)
        self._parents = wrapper.resolve(ParentNodeProvider)
        self._positions = wrapper.resolve(PositionProvider)
        self.budget = Budget.for_nodes(len(self._parents))
        self._methods: dict[cst.FunctionDef, bool] = {}
        self._mentions: dict[tuple[str, bool], tuple[list[cst.Name], dict[str, list[cst.Name]]]] = {}
        self._built_from: dict[str, str | None] = {}  # receiver -> the one class it is built from

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """The qualified names ``node`` may refer to (``{"torch.utils.data.DataLoader"}``)."""
        return {q.name for q in self._qualified.get(node, ())}

    def of_import(self, node: cst.CSTNode) -> bool:
        """``node`` names something an import binds (``torch.log``, ``np.random.seed``)."""
        found = self._qualified.get(node, ())
        return bool(found) and all(q.source is QualifiedNameSource.IMPORT for q in found)

    def calls_imported_module(self, call: cst.Call) -> bool:
        """``wandb.save(...)``: a function of an imported module, no method of the project."""
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        return isinstance(receiver, (cst.Name, cst.Attribute)) and self.of_import(receiver)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Parent, grandparent ... up to the module."""
        return cstutil.ancestors(node, self.parent)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self._positions[node]

    def line(self, node: cst.CSTNode) -> int:
        return self._positions[node].start.line

    @overload
    def of_types(self, kind: type[N], /) -> list[N]: ...
    @overload
    def of_types(self, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]: ...
    def of_types(self, *kinds: type[cst.CSTNode]) -> list[Any]:
        """Every node of these classes in the module, in source order."""
        return cstutil.of_types(self.module, *kinds)

    @overload
    def of_types_in(self, tree: cst.CSTNode, kind: type[N], /) -> list[N]: ...
    @overload
    def of_types_in(self, tree: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]: ...
    def of_types_in(self, tree: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[Any]:
        """Every node of these classes in ``tree`` (a part of the module), in source order."""
        return cstutil.of_types(tree, *kinds)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function around ``node`` (None at module or class level)."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return ancestor
            if isinstance(ancestor, cst.ClassDef):
                return None
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.ClassDef):
                return ancestor
        return None

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement ``node`` is part of (a ``SimpleStatementLine`` or compound statement)."""
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = self.parent(current)
        return current

    @functools.cached_property
    def functions(self) -> dict[str, list[cst.FunctionDef]]:
        """The functions and methods this file defines, by name."""
        found: dict[str, list[cst.FunctionDef]] = {}
        for function in self.of_types(cst.FunctionDef):
            assert isinstance(function, cst.FunctionDef)
            found.setdefault(function.name.value, []).append(function)
        return found

    @functools.cached_property
    def calls_by_callee(self) -> dict[str, list[cst.Call]]:
        """Calls by the last name of their callee: ``f(...)``, ``self.f(...)``, ``obj.f(...)``."""
        found: dict[str, list[cst.Call]] = {}
        for call in self.of_types(cst.Call):
            assert isinstance(call, cst.Call)
            func = call.func
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
            if name is not None:
                found.setdefault(name, []).append(call)
        return found

    def call_sites(self, function: cst.FunctionDef) -> list[cst.Call]:
        """Where this file may call ``function`` (``ddpify.analysis.name_calls``)."""
        return self.name_calls.call_sites(function)

    def functions_called(self, call: cst.Call, *, own_methods_only: bool = False) -> list[cst.FunctionDef]:
        """The inverse of :meth:`call_sites` (``ddpify.analysis.name_calls``)."""
        return self.name_calls.functions_called(call, own_methods_only=own_methods_only)

    @functools.cached_property
    def name_calls(self) -> NameCalls:
        return NameCalls(self)

    def never_runs(self, function: cst.FunctionDef) -> bool:
        """Nothing can run ``function``: this file neither calls nor mentions it, it is not
        decorated or nested, a method belongs to a class with no base to call it (and no
        ``getattr`` computes a name), and no project file importing this one names it. Its
        parameters bring in no value (``Trainer.standard_train(self, model, ...)``, never
        called, only forwarding to ``self.train(model, ...)``)."""
        if function.decorators or self.enclosing_function(function) is not None or self.call_sites(function) or self.mentions_of(function):
            return False
        if self.is_method(function):
            klass = self.enclosing_class(function)
            if klass is None or any(cstutil.code(b.value) != "object" for b in klass.bases) or function.name.value.startswith("__"):
                return False
            if any(len(c.args) > 1 and not isinstance(c.args[1].value, cst.SimpleString) for c in self.calls_by_callee.get("getattr", [])):
                return False
        return not self.project.may_be_called_elsewhere(function.name.value)

    def defined_in(self, klass: cst.ClassDef | None, name: str) -> list[cst.FunctionDef]:
        """The functions named ``name`` whose innermost class is ``klass`` (None: in no class)."""
        return self._by_class.get((klass, name), [])

    @functools.cached_property
    def _by_class(self) -> dict[tuple[cst.ClassDef | None, str], list[cst.FunctionDef]]:
        found: dict[tuple[cst.ClassDef | None, str], list[cst.FunctionDef]] = {}
        for name, functions in self.functions.items():
            for function in functions:
                found.setdefault((self.enclosing_class(function), name), []).append(function)
        return found

    def is_method(self, function: cst.FunctionDef) -> bool:
        """Defined in a class body: not a function nested in a method (``def save(): ...``
        inside ``Trainer.calibrate``, called by its plain name)."""
        found = self._methods.get(function)
        if found is None:
            scope = next((a for a in self.ancestors(function) if isinstance(a, (cst.ClassDef, cst.FunctionDef))), None)
            found = self._methods[function] = isinstance(scope, cst.ClassDef)
        return found

    @functools.cached_property
    def names_by_value(self) -> dict[str, list[cst.Name]]:
        """Every ``Name`` node of the module by its text (one pass, shared by the lookups below)."""
        found: dict[str, list[cst.Name]] = {}
        for name in self.of_types(cst.Name):
            assert isinstance(name, cst.Name)
            found.setdefault(name.value, []).append(name)
        return found

    def mentions_of(self, function: cst.FunctionDef) -> list[cst.Name]:
        """Names that refer to ``function`` without calling it (``mp.spawn(main_worker, ...)``,
        ``Process(target=run)``, ``callbacks=[log]``, ``hook=self.log``): it runs where that code
        sends it. A parameter or variable of the same name is not ``function`` (qualified names
        tell them apart); a method is mentioned only as an attribute. The candidates of a name
        are read once, indexed by qualified name: many same-named nested functions cost no
        more than one each."""
        method = self.is_method(function)
        candidates, by_qualified = self._mention_candidates(function.name.value, method)
        own = self.qualified(function.name)
        if method or not own:
            return list(candidates)
        found: dict[int, cst.Name] = {}
        for qualified in sorted(own):
            for name in by_qualified.get(qualified, ()):
                found.setdefault(id(name), name)
        return list(found.values())

    def _mention_candidates(self, value: str, method: bool) -> tuple[list[cst.Name], dict[str, list[cst.Name]]]:
        """The names spelled ``value`` that may mention a function (methods: as an attribute
        not called; functions: a plain name not called), and those by their qualified names."""
        key = (value, method)
        cached = self._mentions.get(key)
        if cached is not None:
            return cached
        candidates: list[cst.Name] = []
        by_qualified: dict[str, list[cst.Name]] = {}
        for name in self.names_by_value.get(value, []):
            parent = self.parent(name)
            if isinstance(parent, cst.FunctionDef):
                continue
            attribute = isinstance(parent, cst.Attribute) and parent.attr is name
            if method:
                assert parent is not None
                holder = self.parent(parent)
                if attribute and not (isinstance(holder, cst.Call) and holder.func is parent):
                    candidates.append(name)
                continue
            if attribute or (isinstance(parent, cst.Call) and parent.func is name) or _truth_test(parent, name):
                continue
            candidates.append(name)
            for qualified in self.qualified(name):
                by_qualified.setdefault(qualified, []).append(name)
        self._mentions[key] = candidates, by_qualified
        return candidates, by_qualified

    @functools.cached_property
    def assignments(self) -> dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]]:
        """``target text -> [(statement, value)]`` for every binding of a plain name or dotted
        reference (``rank = ...``, ``self.rank: int = ...``, ``args.gpu = gpu``, ``with open(p) as
        f``: the ``open`` call); the value is None where it cannot be read off (``x += 1``, ``a, b
        = f()``, ``for x in ...``). Other context managers' ``as`` names are left out, as before."""
        found: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]] = {}
        for node in self.of_types(cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.WithItem):
            if isinstance(node, cst.WithItem):  # `with open(path) as f`: f is the opened file
                if node.asname is not None and isinstance(node.item, cst.Call) and self.qualified(node.item.func) & _OPEN:
                    _bind(found, node, node.asname.name, node.item)
            elif isinstance(node, cst.Assign):
                for target in node.targets:
                    _bind(found, node, target.target, node.value)
            elif isinstance(node, cst.AnnAssign):
                if node.value is not None:
                    _bind(found, node, node.target, node.value)
            elif isinstance(node, cst.AugAssign):
                _bind(found, node, node.target, None)
            elif isinstance(node, cst.For):
                _bind(found, node, node.target, None)
        return found

    def attribute_assignments(self, attribute: str) -> list[tuple[cst.CSTNode, cst.BaseExpression | None]]:
        """The bindings of every dotted reference ending in ``.attribute`` (``self.opt.optimizer``,
        ``opt.optimizer``), from an index read once."""
        return self._by_attribute.get(attribute, [])

    @functools.cached_property
    def _by_attribute(self) -> dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]]:
        found: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]] = {}
        for key, pairs in self.assignments.items():
            if "." in key:
                found.setdefault(key.rsplit(".", 1)[1], []).extend(pairs)
        return found

    @functools.cached_property
    def project(self) -> Project:
        """The helpers of the project modules this file imports (``ddpify.analysis.project``)."""
        if self._project is not None:
            return self._project
        from ddpify.analysis.project import Project

        return Project(lambda: "", None, 0, lambda module, path, depth: {})

    def project_call(self, call: cst.Call) -> Helper | None:
        """The project helper ``call`` runs: a function of a project module
        (``utils.train_step(...)``), a class's construction (``Trainer(...)``, as
        ``Trainer.__init__``), or a method of an object this file only ever builds from one
        project class (``steps = GanSteps(...)``; ``steps.disc_step(x)`` runs
        ``GanSteps.disc_step``). None: not the project's, or not readable."""
        project = self.project
        func = call.func
        if not cstutil.is_simple_reference(func):
            return None
        found = project.helper(call) or project.named(f"{cstutil.code(func)}.__init__")
        if found is not None or not isinstance(func, cst.Attribute):
            return found
        receiver = func.value
        key = cstutil.code(receiver)
        bindings = self.assignments.get(key, [])
        if isinstance(receiver, cst.Name) and bindings and all(isinstance(node, cst.For) for node, _ in bindings):
            built = _one_class(self._elements_iterated(call, receiver.value))  # `for ckptio in self.ckptios: ckptio.save(step)`
        else:
            if key not in self._built_from:  # once per receiver: its bindings are the file's, whatever the call
                self._built_from[key] = _one_class([v for _, v in bindings])
            built = self._built_from[key]
        return project.named(f"{built}.{func.attr.value}") if built is not None else None

    def project_file(self, call: cst.Call) -> Path | None:
        """The project file whose code ``call`` runs, as :meth:`project_call` resolves it: the
        module of an imported function or class, or of the one class a receiver is built from
        (``deep_SVDD.save_model()`` after ``deep_SVDD = DeepSVDD(...)``)."""
        if not cstutil.is_simple_reference(call.func) or self.project_call(call) is None:
            return None
        root = cstutil.code(call.func).split(".", 1)[0]
        found = self.project.file_of(root)
        if found is None and isinstance(call.func, cst.Attribute):
            built = self._built_from.get(cstutil.code(call.func.value))
            found = self.project.file_of(built.split(".", 1)[0]) if built is not None else None
        return found

    def _elements_iterated(self, call: cst.Call, name: str) -> list[cst.BaseExpression]:
        """What ``name`` takes in the ``for name in holder:`` loop around ``call``: the elements
        of every list or tuple literal assigned to ``holder`` (``self.ckptios = [CheckpointIO(...),
        ...]``); nothing when ``holder`` is ever bound to anything else."""
        loop = next((a for a in self.ancestors(call) if isinstance(a, cst.For) and cstutil.code(a.target) == name), None)
        if loop is None or not cstutil.is_simple_reference(loop.iter):
            return []
        values = [v for _, v in self.assignments.get(cstutil.code(loop.iter), [])]
        literals = [v for v in values if isinstance(v, (cst.List, cst.Tuple))]
        if not values or len(literals) < len(values):
            return []
        return [e.value for v in literals for e in v.elements]

    @functools.cached_property
    def process_starts(self) -> list[cst.Call]:
        """Calls that start processes: ``mp.spawn``, ``start_processes``, ``Process(...)``."""
        found: list[cst.Call] = []
        for callee in ("spawn", "start_processes", "Process"):
            for call in self.calls_by_callee.get(callee, []):
                qualified = self.qualified(call)
                if callee != "Process" and qualified and not any("multiprocessing" in q for q in qualified):
                    continue  # pexpect.spawn(...) and the like
                found.append(call)
        return found

    @functools.cached_property
    def spawned(self) -> dict[cst.FunctionDef, cst.Call]:
        """This file's functions that another process runs: ``mp.spawn(fn, ...)``,
        ``torch.multiprocessing.start_processes(fn, ...)``, ``Process(target=fn)`` (also through
        ``functools.partial(fn, ...)``), or a project helper that spawns its argument
        (``launch(main_worker, ...)``), each with the call that starts it."""
        found: dict[cst.FunctionDef, cst.Call] = {}
        for call in self.process_starts:
            for target in started(call):
                for function in self.functions.get(target, []):
                    found.setdefault(function, call)
            method = started_method(call)  # mp.Process(target=self.train, ...): the class's own train
            owner = self.enclosing_class(call) if method is not None else None
            for function in self.functions.get(method or "", []):
                if owner is not None and self.is_method(function) and self.enclosing_class(function) is owner:
                    found.setdefault(function, call)
        for call in self.of_types(cst.Call):
            helper = self.project.helper(call) if self.functions else None
            if helper is not None and helper.spawns is not None and len(call.args) > helper.spawns:
                argument = call.args[helper.spawns]
                if argument.keyword is None and isinstance(argument.value, cst.Name):
                    for function in self.functions.get(argument.value.value, []):
                        found.setdefault(function, call)
        return found

    def names_function(self, node: cst.BaseExpression) -> bool:
        """A bare name of a function (``is_main_process`` of ``if is_main_process:``): one this file
        defines at its top level, or imports from a project module that does, and binds to
        nothing else (no assignment, no parameter of that name around it)."""
        if not isinstance(node, cst.Name) or self.assignments.get(node.value):
            return False
        for scope in self.ancestors(node):
            if isinstance(scope, (cst.FunctionDef, cst.Lambda)) and node.value in cstutil.parameter_names(scope.params):
                return False
        tops = [f for f in self.functions.get(node.value, []) if self.enclosing_function(f) is None and self.enclosing_class(f) is None]
        return bool(tops) or self.project.defines_function(node.value)


def _callee(call: cst.Call) -> str | None:
    func = call.func
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None


def started(call: cst.Call) -> list[str]:
    """The function a process-starting call runs: its first positional argument (``spawn``)
    or its ``fn=`` / ``target=`` keyword, unwrapped from ``functools.partial(fn, ...)``."""
    chosen: cst.BaseExpression | None = None
    process = _callee(call) == "Process"
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            if arg.keyword.value in ("fn", "target"):
                chosen = arg.value
        elif index == 0 and not arg.star and not process:
            chosen = arg.value
    if isinstance(chosen, cst.Call) and _callee(chosen) == "partial" and chosen.args:
        chosen = chosen.args[0].value
    return [chosen.value] if isinstance(chosen, cst.Name) else []


def started_method(call: cst.Call) -> str | None:
    """``train`` of ``mp.Process(target=self.train, ...)`` / ``mp.spawn(self.worker, ...)``:
    a method of the starting object's own class."""
    chosen = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("fn", "target")), None)
    if chosen is None and call.args and call.args[0].keyword is None and _callee(call) != "Process":
        chosen = call.args[0].value
    if isinstance(chosen, cst.Attribute) and isinstance(chosen.value, cst.Name) and chosen.value.value == "self":
        return chosen.attr.value
    return None


def _bind(
    found: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]],
    statement: cst.CSTNode,
    target: cst.BaseExpression,
    value: cst.BaseExpression | None,
) -> None:
    if cstutil.is_simple_reference(target):
        found.setdefault(cstutil.code(target), []).append((statement, value))
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind(found, statement, element.value, None)


def _one_class(values: Sequence[cst.BaseExpression | None]) -> str | None:
    """The one callee every value is a call of (``GanSteps`` of ``steps = GanSteps(...)``),
    ``None`` values (``ema = None`` on the other path) left out; None when there is no one."""
    bound = [_unless_none(v) for v in values if not cstutil.is_name(v, "None")]
    classes = {cstutil.code(v.func) for v in bound if isinstance(v, cst.Call) and cstutil.is_simple_reference(v.func)}
    return classes.pop() if len(classes) == 1 and all(isinstance(v, cst.Call) for v in bound) else None


def _unless_none(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``EMAHelper(mu) if cfg.ema else None``: the value when it is not None."""
    if isinstance(node, cst.IfExp) and (cstutil.is_name(node.body, "None") or cstutil.is_name(node.orelse, "None")):
        return node.orelse if cstutil.is_name(node.body, "None") else node.body
    return node


def _truth_test(parent: cst.CSTNode | None, name: cst.Name) -> bool:
    """``not evaluate``, ``evaluate is None``, ``if evaluate:``: the name's truth is read, the
    function is handed to nobody (BERT-NER's ``and not evaluate``, a slip for a flag)."""
    if isinstance(parent, (cst.UnaryOperation, cst.ComparisonTarget)):
        return True
    if isinstance(parent, cst.Comparison):
        return parent.left is name
    return isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is name
