"""The file's own code as a graph: which of its functions a call runs (``callees``), which
calls run a function (``callers``), which parameter an argument fills, and which reads see
the value an assignment binds (``reads_from``, ``stores_reaching``; ``self.`` attributes too).

``Values`` follows values over this graph. Each answer is computed for the node or function
asked about and cached, from indexes built once per file (names by spelling, calls by callee
name, ``self.`` attributes per class), so no question walks the whole tree.
"""

from __future__ import annotations

import functools

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.tree import cstutil
from ddpify.tree.qualified_names import BindingProvider

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class CallGraph:
    """Calls, parameters, variables and attributes of one file (see the module docstring)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._flat, _ = cstutil.flatten(source.module)
        self._bindings = source.wrapper.resolve(BindingProvider)
        self._callees: dict[cst.Call, tuple[tuple[cst.FunctionDef, int], ...]] = {}
        self._callers: dict[str, dict[cst.FunctionDef, list[tuple[cst.Call, int]]]] = {}
        self._variables: dict[tuple[cst.CSTNode, str], tuple[list[cst.Name], list[cst.Name]]] = {}
        self._classes: dict[cst.ClassDef, dict[str, tuple[list, list]]] = {}
        self._instances: dict[cst.CSTNode, cst.ClassDef | None] = {}
        self._own: dict[tuple[cst.CSTNode, type], list[cst.CSTNode]] = {}
        self._frames: dict[cst.CSTNode, cst.CSTNode] = {}
        self._blocks: dict[cst.CSTNode, cst.CSTNode | None] = {}
        self._bound: dict[cst.CSTNode, int] = {}

    # ------------------------------------------------------------------ order
    def start(self, node: cst.CSTNode) -> int:
        """Position of ``node`` in the file's visit order (parents before children)."""
        found = self._flat.position(node)
        return -1 if found is None else found

    def end(self, node: cst.CSTNode) -> int:
        """Position just past ``node``'s subtree: when it has been evaluated."""
        found = self._flat.position(node)
        return -1 if found is None else self._flat.ends[found]

    def inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        start = self._flat.position(outer)
        return start is not None and start <= self.start(node) < self._flat.ends[start]

    def frame_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function whose run evaluates ``node`` (the module for top-level code)."""
        found = self._frames.get(node)
        if found is None:
            found = self._frames[node] = self.source.enclosing_function(node) or self.source.module
        return found

    # ------------------------------------------------------------------ definitions
    @functools.cached_property
    def definitions(self) -> dict[str, cst.FunctionDef | cst.ClassDef]:
        """The file's functions and classes by qualified name (``train``, ``Trainer.fit``)."""
        found: dict[str, cst.FunctionDef | cst.ClassDef] = {}
        for node in self.source.of_types(cst.FunctionDef, cst.ClassDef):
            for name in self.source.qualified(node.name):  # type: ignore[attr-defined]
                found.setdefault(name, node)  # type: ignore[arg-type]
        return found

    @functools.cached_property
    def _defined_names(self) -> frozenset[str]:
        definitions: list[cst.FunctionDef | cst.ClassDef] = [*self.source.of_types(cst.FunctionDef), *self.source.of_types(cst.ClassDef)]
        return frozenset(d.name.value for d in definitions)

    def name_of(self, function: cst.FunctionDef) -> str:
        """``Trainer.__init__``, ``main``: how a report names a function."""
        klass = self.source.enclosing_class(function)
        return f"{klass.name.value}.{function.name.value}" if klass is not None else function.name.value

    def method(self, klass: cst.ClassDef, name: str, depth: int = 0) -> cst.FunctionDef | None:
        """``klass``'s method ``name``, its own or inherited from a class of this file."""
        for statement in klass.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return statement
        for base in klass.bases if depth < 8 else ():
            for qualified in self.source.qualified(base.value):
                parent = self.definitions.get(qualified)
                if isinstance(parent, cst.ClassDef) and (found := self.method(parent, name, depth + 1)) is not None:
                    return found
        return None

    def class_called(self, call: cst.Call) -> cst.ClassDef | None:
        """The file's class ``call`` instantiates."""
        for qualified in self.source.qualified(call.func):
            found = self.definitions.get(qualified)
            if isinstance(found, cst.ClassDef):
                return found
        return None

    def callees(self, call: cst.Call) -> tuple[tuple[cst.FunctionDef, int], ...]:
        """The file's functions ``call`` runs, each with how many leading parameters the call
        fills implicitly (1 for ``self`` of a method or ``__init__``): ``train(...)``,
        ``Trainer(...)``, ``self.step(...)``, ``trainer.fit(...)`` with ``trainer = Trainer()``.
        Empty for code defined elsewhere; a method is never guessed from its name alone."""
        found = self._callees.get(call)
        if found is not None:
            return found
        result: list[tuple[cst.FunctionDef, int]] = []
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name not in self._defined_names:  # nothing of this file is called so: skip the lookups
            self._callees[call] = ()
            return ()
        for qualified in self.source.qualified(func):
            definition = self.definitions.get(qualified)
            if isinstance(definition, cst.ClassDef):
                init = self.method(definition, "__init__")
                if init is not None:
                    result.append((init, 1))
            elif isinstance(definition, cst.FunctionDef):
                in_class = self.source.enclosing_class(definition) is not None
                if in_class and not (isinstance(func, cst.Attribute) and isinstance(func.value, (cst.Name, cst.Attribute))):
                    continue  # Loop().run: an instance's method, found below
                result.append((definition, 1 if _decorated(definition, "classmethod") else 0))
        if not result and isinstance(func, cst.Attribute):
            klass = self.receiver_class(func.value)
            own = self.method(klass, func.attr.value) if klass is not None else None
            if own is not None:
                result.append((own, 0 if _decorated(own, "staticmethod") else 1))
        found = self._callees[call] = tuple(result)
        return found

    def callers(self, function: cst.FunctionDef) -> list[tuple[cst.Call, int]]:
        """The calls of this file that run ``function`` (constructions for ``__init__``)."""
        name = function.name.value
        klass = self.source.enclosing_class(function)
        if name == "__init__" and klass is not None:
            name = klass.name.value
        index = self._callers.get(name)
        if index is None:  # the calls of one name, read once for every function of that name
            index = self._callers[name] = {}
            for call in self.source.calls_by_callee.get(name, []):
                for callee, implicit in self.callees(call):
                    index.setdefault(callee, []).append((call, implicit))
        return index.get(function, [])

    def parameter(self, call: cst.Call, function: cst.FunctionDef, implicit: int, arg: cst.Arg) -> cst.Param | None:
        """The parameter of ``function`` that ``arg`` of ``call`` fills (None for ``*args``)."""
        params = function.params
        positional = [*params.posonly_params, *params.params]
        if arg.star:
            return None
        if arg.keyword is not None:
            return next((p for p in [*positional, *params.kwonly_params] if p.name.value == arg.keyword.value), None)
        index = implicit
        for other in call.args:
            if other is arg:
                break
            if other.star:
                return None
            if other.keyword is None:
                index += 1
        return positional[index] if index < len(positional) else None

    def argument(self, call: cst.Call, function: cst.FunctionDef, implicit: int, param: cst.Param) -> cst.BaseExpression | None:
        """What ``call`` passes for ``param`` (None when nothing is passed explicitly)."""
        return next((a.value for a in call.args if self.parameter(call, function, implicit, a) is param), None)

    def is_self(self, param: cst.Param, function: cst.FunctionDef) -> bool:
        """``self`` (or ``cls``) of a method: filled by the call's receiver."""
        params = [*function.params.posonly_params, *function.params.params]
        return (
            bool(params)
            and params[0] is param
            and self.source.enclosing_class(function) is not None
            and not _decorated(function, "staticmethod")
        )

    def own(self, function: cst.FunctionDef, kind: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Nodes of ``kind`` that ``function``'s own run evaluates (not nested definitions')."""
        key = (function, kind)
        found = self._own.get(key)
        if found is None:
            nested = [n for n in cstutil.of_types(function.body, *_NESTED)]
            found = self._own[key] = [n for n in cstutil.of_types(function.body, kind) if not any(self.inside(n, d) for d in nested)]
        return found

    def is_generator(self, function: cst.FunctionDef) -> bool:
        return bool(self.own(function, cst.Yield))

    def receiver_class(self, expression: cst.BaseExpression) -> cst.ClassDef | None:
        """The file's class of ``self`` inside its methods, of an instance variable, or of
        the instance a call builds (``Loop().run()``)."""
        if isinstance(expression, cst.Call):
            return self.class_called(expression)
        if isinstance(expression, cst.Name):
            method = self.method_of(expression)
            if method is not None and self.self_name(method) == expression.value and self.scope_of(expression) is method:
                return self.source.enclosing_class(method)
        return self.instance_class(expression)

    def instance_class(self, expression: cst.BaseExpression) -> cst.ClassDef | None:
        """``trainer`` after ``trainer = Trainer(...)`` (or ``= Net.from_pretrained(...)``):
        the one class of this file its assignments build."""
        if expression in self._instances:
            return self._instances[expression]
        self._instances[expression] = None  # a cycle answers None
        stores: list[cst.CSTNode] = []
        if isinstance(expression, cst.Name):
            stores = list(self.stores_reaching(expression))
        elif isinstance(expression, cst.Attribute) and (owner := self.attribute_owner(expression)) is not None:
            stores = [s for s, _ in self.attribute_stores(owner, expression.attr.value)]
        classes: set[cst.ClassDef] = set()
        for store in stores:
            site = binding_site(self.source, store)
            value = site.value if isinstance(site, cst.Assign) else None
            if isinstance(value, cst.Call):
                klass = self.class_called(value)
                if klass is None and isinstance(value.func, cst.Attribute):
                    klass = next(
                        (d for q in self.source.qualified(value.func.value) if isinstance(d := self.definitions.get(q), cst.ClassDef)), None
                    )
                if klass is not None:
                    classes.add(klass)
        found = self._instances[expression] = classes.pop() if len(classes) == 1 else None
        return found

    # ------------------------------------------------------------------ variables
    @functools.cached_property
    def names(self) -> dict[str, list[cst.Name]]:
        """Every ``Name`` of the file by spelling."""
        found: dict[str, list[cst.Name]] = {}
        for name in self.source.of_types(cst.Name):
            assert isinstance(name, cst.Name)
            found.setdefault(name.value, []).append(name)
        return found

    def scope_of(self, name: cst.Name) -> cst.CSTNode | None:
        """The scope (module, function, class or comprehension) whose variable ``name`` is."""
        try:
            found = self._bindings[name]
        except KeyError:
            return None
        return found[0].scope if found else None

    def _variable(self, scope: cst.CSTNode, spelling: str) -> tuple[list[cst.Name], list[cst.Name]]:
        """(names that bind it, names that read it) of one variable."""
        found = self._variables.get((scope, spelling))
        if found is None:
            for name in self.names.get(spelling, ()):  # every variable of this spelling at once
                owner = self.scope_of(name)
                if owner is None:
                    continue
                stores, reads = self._variables.setdefault((owner, spelling), ([], []))
                if binding_site(self.source, name) is not None:
                    stores.append(name)
                elif _is_read(self.source, name):
                    reads.append(name)
            found = self._variables.setdefault((scope, spelling), ([], []))
        return found

    def variable_reads(self, name: cst.Name) -> list[cst.Name]:
        """Every read of the variable ``name`` is (or reads), in any order."""
        scope = self.scope_of(name)
        return self._variable(scope, name.value)[1] if scope is not None else []

    def reads_from(self, store: cst.Name) -> list[cst.Name]:
        """The reads that may see the value ``store`` binds: later in the same function unless
        a later assignment in a block around the read replaced it; any read from another
        function (a closure or a global)."""
        scope = self.scope_of(store)
        if scope is None:
            return []
        stores, reads = self._variable(scope, store.value)
        if isinstance(scope, _COMPREHENSIONS):
            return list(reads)
        after = self.bound_at(store)
        return [r for r in reads if self.frame_of(r) is not scope or (self.start(r) >= after and not self._replaced(store, stores, r))]

    def stores_reaching(self, read: cst.Name) -> list[cst.Name]:
        """The assignments whose value ``read`` may see (all of them where order says nothing)."""
        scope = self.scope_of(read)
        if scope is None:
            return []
        stores, _ = self._variable(scope, read.value)
        if isinstance(scope, _COMPREHENSIONS) or self.frame_of(read) is not scope:
            return list(stores)
        before = [s for s in stores if self.bound_at(s) <= self.start(read)]
        return [s for s in before if not self._replaced(s, before, read)] or list(stores)

    def bound_at(self, store: cst.CSTNode) -> int:
        """Position from which reads see what ``store`` binds."""
        found = self._bound.get(store)
        if found is None:
            site = binding_site(self.source, store)
            assigned = isinstance(site, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr))
            found = self._bound[store] = self.end(site if assigned else store)  # type: ignore[arg-type]
        return found

    def _replaced(self, store: cst.CSTNode, stores: list[cst.Name], read: cst.CSTNode) -> bool:
        """Another assignment between ``store`` and ``read``, in a block around ``read``."""
        after = self.bound_at(store)
        for other in stores:
            if other is store or not after <= self.bound_at(other) <= self.start(read):
                continue
            block = self._block_of(other)
            if block is not None and self.inside(read, block):
                return True
        return False

    def _block_of(self, store: cst.CSTNode) -> cst.CSTNode | None:
        """The block whose later statements an assignment's value replaces (None for ``x +=``:
        the same object, changed)."""
        if store not in self._blocks:
            statement = self.source.statement_of(store)
            augmented = isinstance(binding_site(self.source, store), cst.AugAssign)
            self._blocks[store] = self.source.parent(statement) if statement is not None and not augmented else None
        return self._blocks[store]

    # ------------------------------------------------------------------ self.attributes
    def method_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The method (a function directly in a class body) whose code holds ``node``."""
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                block = self.source.parent(ancestor)
                if block is not None and isinstance(self.source.parent(block), cst.ClassDef):
                    return ancestor
            elif isinstance(ancestor, cst.ClassDef):
                return None
        return None

    def self_name(self, method: cst.FunctionDef) -> str | None:
        params = [*method.params.posonly_params, *method.params.params]
        if not params or _decorated(method, "staticmethod") or _decorated(method, "classmethod"):
            return None
        return params[0].name.value

    def attribute_owner(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The file's class whose instance attribute ``self.x`` / ``trainer.x`` is."""
        if not isinstance(node, cst.Attribute):
            return None
        return self.receiver_class(node.value)

    def _attributes(self, klass: cst.ClassDef) -> dict[str, tuple[list, list]]:
        """``self.x`` in the class's methods: attribute -> (stores, reads), each (node, method)."""
        found = self._classes.get(klass)
        if found is None:
            found = self._classes[klass] = {}
            for node in cstutil.of_types(klass.body, cst.Attribute):
                value = node.value
                if not isinstance(value, cst.Name):
                    continue
                method = self.method_of(node)
                if method is None or self.source.enclosing_class(method) is not klass or self.self_name(method) != value.value:
                    continue
                stores, reads = found.setdefault(node.attr.value, ([], []))
                (stores if binding_site(self.source, node) is not None else reads).append((node, method))
        return found

    def attributes(self, klass: cst.ClassDef) -> dict[str, tuple[list, list]]:
        """Every ``self.x`` of the class's methods: x -> (stores, reads), each (node, method)."""
        return self._attributes(klass)

    def attribute_stores(self, klass: cst.ClassDef, attribute: str) -> list[tuple[cst.Attribute, cst.FunctionDef | None]]:
        return list(self._attributes(klass).get(attribute, ([], []))[0])

    def attribute_reads(self, klass: cst.ClassDef, attribute: str) -> list[tuple[cst.Attribute, cst.FunctionDef | None]]:
        """``self.x`` read in the class's methods and ``obj.x`` on instances built by the file."""
        reads = list(self._attributes(klass).get(attribute, ([], []))[1])
        for call in self.source.calls_by_callee.get(klass.name.value, []):
            site = self.source.parent(call)
            if self.class_called(call) is not klass or not isinstance(site, cst.Assign):
                continue
            for target in site.targets:
                if isinstance(target.target, cst.Name):
                    for read in self.reads_from(target.target):
                        parent = self.source.parent(read)
                        if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value == attribute:
                            reads.append((parent, self.method_of(parent)))
        return reads


def binding_site(source: Source, node: cst.CSTNode) -> cst.CSTNode | None:
    """The statement or clause that binds ``node`` when it is an assignment target, a loop or
    comprehension target, a ``with ... as`` name, a walrus target or a parameter; else None."""
    child, parent = node, source.parent(node)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        child, parent = parent, source.parent(parent)
    if isinstance(parent, cst.AssignTarget):
        return source.parent(parent)
    if isinstance(parent, (cst.For, cst.CompFor, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)) and parent.target is child:
        return parent
    if isinstance(parent, cst.AsName):
        holder = source.parent(parent)
        return holder if isinstance(holder, (cst.WithItem, cst.ExceptHandler)) else None
    if isinstance(parent, cst.Param) and parent.name is child:
        return parent
    return None


def _is_read(source: Source, name: cst.Name) -> bool:
    parent = source.parent(name)
    if isinstance(parent, cst.Attribute):
        return parent.value is name
    if isinstance(parent, cst.Arg):
        return parent.keyword is not name
    return not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.ImportAlias, cst.AsName, cst.NameItem, cst.Del))


def literal(node: cst.CSTNode | None) -> str | int | None:
    """The value of a string or integer literal (``"train"``, ``0``), else None."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return text if isinstance(text, str) else None
    if isinstance(node, cst.Integer):
        number = node.evaluated_value
        return number if isinstance(number, int) else None
    return None


def _decorated(function: cst.FunctionDef, name: str) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == name for d in function.decorators)


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def reads_keys(source: Source, loop: cst.For | cst.CompFor) -> bool:
    """``for name in nets: ... nets[name]`` (also in a comprehension): the loop variable holds
    the container's keys, not its elements (``cstutil.loop_reads_keys``)."""
    scope = loop.body if isinstance(loop, cst.For) else next((a for a in source.ancestors(loop) if isinstance(a, _COMPREHENSIONS)), None)
    return scope is not None and cstutil.loop_reads_keys(loop, scope)
