"""The converter's one walk over a script: :class:`Recorder` notes what is there (loaders,
optimizers, epoch loops, assignments, uses, the calls the planners ask about) in a
:class:`Recording`, and decides nothing. The planners (``ddpify.convert.planners``) read the
recording, with its queries (qualified names, lines, parents, owners), after the walk.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst._metadata_dependent import LazyValue  # what get_metadata unwraps (libcst's own qualified names)
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedName, QualifiedNameProvider

from ddpify.analysis import Analysis
from ddpify.convert import names, writes
from ddpify.tree import cstutil
from ddpify.tree.cstutil import attribute_name, callee_name, code, is_simple_reference, keyword_value
from ddpify.tree.qualified_names import BindingProvider

Owners = tuple[cst.FunctionDef | None, cst.ClassDef | None]
# nn.Module methods whose receiver is a model (for optimizers built by helpers)
_MODULE_CALLS = frozenset({"train", "eval", "to", "cuda", "parameters", "named_parameters", "forward", "apply"})


@dataclass
class Recording:
    """What one walk over ``module`` saw, in visit order, and the metadata to ask about it."""

    module: cst.Module = field(default_factory=lambda: cst.Module([]))
    metadata: Mapping[Any, Mapping[cst.CSTNode, Any]] = field(default_factory=dict)
    functions: list[cst.FunctionDef] = field(default_factory=list)  # every def, nested ones too
    classes: list[cst.ClassDef] = field(default_factory=list)
    defined: set[str] = field(default_factory=set)  # names of the functions and classes this file defines
    # outermost epoch loops (``for epoch in ...``) with the function and class they are in
    for_loops: list[cst.For] = field(default_factory=list)
    # DataLoader(...) calls with the innermost function and class they are in
    loader_calls: list[tuple[cst.Call, cst.FunctionDef | None, cst.ClassDef | None]] = field(default_factory=list)
    optimizer_calls: list[cst.Call] = field(default_factory=list)  # torch.optim.Adam(...), ...
    parallel_models: list[cst.BaseExpression] = field(default_factory=list)  # `model` of DataParallel(model)
    bootstrapped: bool = False  # calls ddpify.setup() / ddpify.distributed() already
    setup_calls: list[cst.Call] = field(default_factory=list)  # those calls
    imports_runtime: bool = False  # imports ddpify.runtime (a converted script)
    star_import: bool = False  # `from models import *`: names may come from there
    existing_wraps: dict[str, cst.Call] = field(default_factory=dict)  # model key -> its ddpify.prepare_model(...)
    existing_shards: set[str] = field(default_factory=set)  # `x` of ddpify.shard(x, ...)
    existing_set_epoch: list[tuple[cst.Call, str]] = field(default_factory=list)  # (call, its code)
    download_calls: list[cst.Call] = field(default_factory=list)  # download=..., .from_pretrained(...)
    write_calls: list[cst.Call] = field(default_factory=list)  # writes.is_candidate
    first_backward: cst.Call | None = None
    moves_in_loops: list[cst.Call] = field(default_factory=list)  # x.cpu() / x.to(...) / x.cuda() inside loops
    stepped: set[str] = field(default_factory=set)  # `x` of x.step() and scaler.step(x)
    module_like: set[str] = field(default_factory=set)  # called (`net(x)`) or given nn.Module calls (`net.train()`)
    # `fc` of fc.zero_grad() / fc.parameters(): candidates for hand-written updates
    parameter_receivers: dict[str, None] = field(default_factory=dict)  # ordered set
    checkpoint_calls: list[cst.Call] = field(default_factory=list)  # calls named like save_checkpoint
    reference_calls: list[cst.Call] = field(default_factory=list)  # calls given a name (`check_accuracy(loader, model)`)
    name_calls: list[tuple[cst.Call, str]] = field(default_factory=list)  # `f(...)` and f
    self_method_calls: list[tuple[cst.Call, str]] = field(default_factory=list)  # `self.m(...)` and m
    call_assignments: list[tuple[cst.Assign, cst.SimpleStatementLine]] = field(default_factory=list)  # `x = f(...)` statements
    aliases: list[tuple[str, str, cst.Assign]] = field(default_factory=list)  # `a.b = c.d`: (target, value, node)
    uses: dict[str, list[int]] = field(default_factory=dict)  # name or attribute read -> its lines
    values: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # variable -> assigned values
    wrapper: MetadataWrapper | None = None  # what the walk read, for the shared analysis

    @functools.cached_property
    def analysis(self) -> Analysis:
        """The shared DDP analysis of the same module (``ddpify.analysis``), built on first
        use from the same metadata: planners that never ask for it cost nothing."""
        assert self.wrapper is not None, "a recording made without its wrapper has no analysis"
        return Analysis(self.wrapper)

    @functools.cached_property
    def epoch_loops(self) -> list[tuple[cst.For, cst.FunctionDef | None, cst.ClassDef | None]]:
        """The outermost epoch loops (``ddpify.analysis.loops``), each with its function and class."""
        loops = self.analysis.loops
        return [
            (loop, *self.owners_of(loop))
            for loop in self.for_loops
            if loops.is_epoch_loop(loop) and not any(isinstance(a, cst.For) and loops.is_epoch_loop(a) for a in self.ancestors(loop))
        ]

    def share(self, analysis: Analysis) -> None:
        """Use ``analysis``, built by someone else from this recording's wrapper, as its own."""
        assert analysis.source.module is self.module, "an analysis of another module"
        self.__dict__["analysis"] = analysis  # what functools.cached_property would have stored

    # ---------------------------------------------------------------- queries
    def _metadata(self, provider: Any, node: cst.CSTNode, default: Any) -> Any:
        value = self.metadata[provider].get(node, default)
        return value() if isinstance(value, LazyValue) else value

    def qualified_names(self, node: cst.CSTNode) -> set[QualifiedName]:
        """Qualified names with their sources (import, local, builtin)."""
        return self._metadata(QualifiedNameProvider, node, set())

    def qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.qualified_names(node)}

    def bindings(self, node: cst.CSTNode, default: Any = None) -> Any:
        """The assignments a name resolves to (``BindingProvider``), or ``default``."""
        return self._metadata(BindingProvider, node, default)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self._metadata(PositionProvider, node, None)

    def line(self, node: cst.CSTNode) -> int:
        return self.position(node).start.line

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._metadata(ParentNodeProvider, node, None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        return cstutil.ancestors(node, self.parent)

    def values_of(self, variable: str) -> list[cst.BaseExpression]:
        """Every value assigned to the plain name ``variable`` anywhere in the script."""
        return self.values.get(variable, [])

    def module_function(self, name: str) -> cst.FunctionDef | None:
        """The one module-level function this file defines as ``name``; None when there is none
        or several (which one a call runs is then a guess)."""
        found = self._module_functions.get(name, [])
        return found[0] if len(found) == 1 else None

    @functools.cached_property
    def _module_functions(self) -> dict[str, list[cst.FunctionDef]]:
        """Read after the walk (planners ask), once: a file of n functions is n lookups."""
        found: dict[str, list[cst.FunctionDef]] = {}
        for function in self.functions:
            if self.owners_of(function) == (None, None):
                found.setdefault(function.name.value, []).append(function)
        return found

    def defines(self, name: str) -> bool:
        """Whether this file defines a function, method or class called ``name``."""
        return name in self.defined

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function around ``node`` (None at module or class level)."""
        return self.owners_of(node)[0]

    def owners_of(self, node: cst.CSTNode) -> Owners:
        """(innermost function, innermost class) around ``node``; a function outside that
        class does not count."""
        function: cst.FunctionDef | None = None
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef) and function is None:
                function = ancestor
            elif isinstance(ancestor, cst.ClassDef):
                return function, ancestor
        return function, None


class Recorder(cst.CSTVisitor):
    """Fills a :class:`Recording` in one walk; needs qualified names, parents and positions."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider, PositionProvider, BindingProvider)

    def __init__(self) -> None:
        super().__init__()
        self.recording = Recording()
        self._functions: list[cst.FunctionDef] = []
        self._classes: list[cst.ClassDef] = []
        self._loop_depth = 0
        self._no_use_depth = 0  # inside DataLoader(...) / add_argument(...): not a "use"

    # ---------------------------------------------------------------- scopes
    def visit_Module(self, node: cst.Module) -> None:
        self.recording.module = node
        self.recording.metadata = self.metadata  # kept for the planners' queries after the walk

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)
        self.recording.functions.append(node)
        self.recording.defined.add(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)
        self.recording.classes.append(node)
        self.recording.defined.add(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def _function(self) -> cst.FunctionDef | None:
        return self._functions[-1] if self._functions else None

    def _class(self) -> cst.ClassDef | None:
        return self._classes[-1] if self._classes else None

    # ---------------------------------------------------------------- loops
    def visit_For(self, node: cst.For) -> None:
        self.recording.for_loops.append(node)
        self._loop_depth += 1

    def visit_While(self, node: cst.While) -> None:
        self._loop_depth += 1

    def leave_While(self, original_node: cst.While) -> None:
        self._loop_depth -= 1

    def leave_For(self, original_node: cst.For) -> None:
        self._loop_depth -= 1

    # ---------------------------------------------------------------- imports, assignments, uses
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._note_import(code(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.recording.star_import = True
        if node.module is not None and node.relative == ():
            self._note_import(code(node.module))

    def _note_import(self, module: str) -> None:
        if module == names.RUNTIME_MODULE or module.startswith(names.RUNTIME_MODULE + "."):
            self.recording.imports_runtime = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.recording.values.setdefault(node.target.value, []).append(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        recording = self.recording
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                recording.values.setdefault(target.target.value, []).append(node.value)
        if len(node.targets) == 1 and is_simple_reference(node.targets[0].target) and is_simple_reference(node.value):
            recording.aliases.append((code(node.targets[0].target), code(node.value), node))
        statement = recording.parent(node)
        if isinstance(node.value, cst.Call) and isinstance(statement, cst.SimpleStatementLine):
            recording.call_assignments.append((node, statement))

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.recording.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, (cst.Arg, cst.Param)) and getattr(parent, "keyword", None) is node or isinstance(parent, cst.Param):
            return
        self._note_use(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._note_use(node)

    def _note_use(self, node: cst.BaseExpression) -> None:
        if self._no_use_depth:
            return
        parent = self.recording.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.For)) or (isinstance(parent, cst.AnnAssign) and parent.target is node):
            return
        self.recording.uses.setdefault(code(node), []).append(self.recording.line(node))

    # ---------------------------------------------------------------- calls
    def leave_Call(self, original_node: cst.Call) -> None:
        if self._ignores_uses(original_node):
            self._no_use_depth -= 1

    def _ignores_uses(self, node: cst.Call) -> bool:
        return bool(self.recording.qualified(node) & names.DATALOADER) or attribute_name(node.func) == "add_argument"

    def visit_Call(self, node: cst.Call) -> None:
        recording = self.recording
        if self._ignores_uses(node):
            self._no_use_depth += 1
        qualified = recording.qualified(node)
        if qualified & names.DATALOADER:
            recording.loader_calls.append((node, self._function(), self._class()))
        elif names.is_optimizer(qualified):
            recording.optimizer_calls.append(node)
        elif qualified & names.DATAPARALLEL and node.args and is_simple_reference(node.args[0].value):
            recording.parallel_models.append(node.args[0].value)
        elif qualified & {"ddpify.runtime.setup", "ddpify.runtime.distributed"}:
            recording.bootstrapped = True
            recording.setup_calls.append(node)
        elif "ddpify.runtime.prepare_model" in qualified and node.args:
            recording.existing_wraps.setdefault(code(node.args[0].value), node)
        elif "ddpify.runtime.shard" in qualified and node.args:
            recording.existing_shards.add(code(node.args[0].value))
        elif attribute_name(node.func) == "set_epoch" or "ddpify.runtime.set_epoch" in qualified:
            recording.existing_set_epoch.append((node, code(node)))
        if _downloads(node):
            recording.download_calls.append(node)
        if writes.is_candidate(node, qualified):
            recording.write_calls.append(node)
        if attribute_name(node.func) == "backward" and recording.first_backward is None:
            recording.first_backward = node
        if self._loop_depth and attribute_name(node.func) in ("cpu", "to", "cuda"):
            recording.moves_in_loops.append(node)
        self._note_module_like_use(node)
        callee = callee_name(node)
        if callee and names.CHECKPOINT_HELPER.search(callee) and not names.NOT_A_SAVE.search(callee):
            recording.checkpoint_calls.append(node)
        if any(is_simple_reference(a.value) for a in node.args):
            recording.reference_calls.append(node)
        if isinstance(node.func, cst.Name):
            recording.name_calls.append((node, node.func.value))
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            recording.self_method_calls.append((node, node.func.attr.value))

    def _note_module_like_use(self, call: cst.Call) -> None:
        func = call.func
        recording = self.recording
        if is_simple_reference(func):
            recording.module_like.add(code(func))
        if isinstance(func, cst.Attribute):
            if func.attr.value == "step":
                recording.stepped.add(code(func.value))
                recording.stepped.update(code(a.value) for a in call.args[:1])
            elif func.attr.value in _MODULE_CALLS:
                recording.module_like.add(code(func.value))
            if func.attr.value in {"zero_grad", "parameters", "named_parameters"} and is_simple_reference(func.value):
                recording.parameter_receivers.setdefault(code(func.value))


def _downloads(call: cst.Call) -> bool:
    """``download=<anything but False>`` or ``.from_pretrained(...)``: fetches files."""
    download = keyword_value(call, "download")
    if download is not None:
        return not (isinstance(download, cst.Name) and download.value == "False")
    return attribute_name(call.func) == "from_pretrained"
