"""One read-only pass over the script: which loaders train, which models train, where the
epoch loops are, and where new statements belong. The transformer only acts on these facts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
)

from ddpify.convert import names, side_effects
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import attribute_name, code, has_binary_operator, is_simple_reference, of_types, single_statement
from ddpify.tree.metadata import run_visitor
from ddpify.tree.qualified_names import BindingProvider

Role = Literal["train", "eval"]


@dataclass
class LoaderFact:
    call: cst.Call
    key: str | None
    role: Role
    reason: str
    line: int
    # Set when the batch-size expression is also used as "the size of a batch" elsewhere:
    # splitting the batch would break that code, so this loader keeps the per-process batch.
    batch_used_at: int | None = None
    batch_expression: str | None = None


@dataclass
class HelperLoader:
    """A training loader returned by a function this file does not define (a helper in another
    module): it cannot be rewritten where it is built, so it is rebuilt after ``statement``."""

    statement: cst.SimpleStatementLine
    key: str
    helper: str
    line: int


@dataclass
class Facts:
    loaders: dict[cst.Call, LoaderFact] = field(default_factory=dict)
    helper_loaders: list[HelperLoader] = field(default_factory=list)
    # `save_checkpoint(...)` of the project's own modules: statement -> helper, run on rank 0
    rank_zero_helpers: dict[cst.SimpleStatementLine, str] = field(default_factory=dict)
    # trained models handed to such a helper: passed as ddpify.unwrap(model)
    unwrapped_args: set[cst.Arg] = field(default_factory=set)
    # model wrap: model key -> (statement to insert before / after, "before" | "after")
    model_wraps: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)
    model_keys: set[str] = field(default_factory=set)
    # scopes that bind each plain-name model (`model` in main()): the same name bound in
    # another function (`model = parser.add_argument_group(...)`) is not the model
    model_scopes: dict[str, set[cst.CSTNode]] = field(default_factory=dict)
    set_epoch: dict[cst.For, list[str]] = field(default_factory=dict)
    # gradient accumulation loops: loop -> (model key, the test that decides the step)
    accumulation: dict[cst.For, tuple[str, str]] = field(default_factory=dict)
    # arguments that hand a training loader to evaluation code (a loop without backward)
    unsharded_args: set[cst.Arg] = field(default_factory=set)
    # model.cpu() / model.to(device) inside the training loop, after the wrap: dropped
    dropped_moves: set[cst.Call] = field(default_factory=set)
    # statements that download data (download=True, from_pretrained): rank 0 goes first
    downloads: set[cst.SimpleStatementLine] = field(default_factory=set)
    # writes one process makes (save_image, savefig, csv/log files...): statement -> what it writes
    main_process_only: dict[cst.CSTNode, str] = field(default_factory=dict)
    # open(path, "w") whose block also computes: ddpify.rank_zero(open)(...)
    rank_zero_opens: set[cst.Call] = field(default_factory=set)
    # models saved whole (torch.save(model, f), {"net": net}): the Arg / DictElement to unwrap
    unwrapped_values: set[cst.CSTNode] = field(default_factory=set)
    main_guard: cst.If | None = None
    setup_after: cst.CSTNode | None = None
    has_training_code: bool = False
    already_converted: bool = False
    changes: list[Change] = field(default_factory=list)
    manual: list[ManualItem] = field(default_factory=list)


class FactCollector(cst.CSTVisitor):
    """Collects :class:`Facts`; needs qualified names, parents and positions."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider, PositionProvider, BindingProvider)

    def __init__(self) -> None:
        super().__init__()
        self.facts = Facts()
        self._functions: list[cst.FunctionDef] = []
        self._classes: list[cst.ClassDef] = []
        self._epoch_loops: list[tuple[cst.For, cst.FunctionDef | None, cst.ClassDef | None]] = []
        self._epoch_depth = 0
        self._optimizers: list[tuple[cst.Call, str]] = []
        self._optimizer_calls: list[cst.Call] = []
        # loader key -> (role, owning function or None for module, owning class)
        self._loader_keys: list[tuple[str, Role, cst.FunctionDef | None, cst.ClassDef | None]] = []
        self._loader_lines: dict[str, int] = {}
        self._loader_factories: dict[str, Role] = {}
        self._factory_calls: list[tuple[cst.Call, str]] = []
        self._method_calls: list[tuple[cst.Call, str]] = []
        self._existing_set_epoch: list[tuple[cst.Call, str]] = []
        self._existing_wraps: dict[str, cst.Call] = {}  # model key -> its ddpify.prepare_model(...)
        self._existing_shards: set[str] = set()
        self._defined: set[str] = set()  # names of the functions and classes this file defines
        self._call_assignments: list[tuple[cst.Assign, cst.SimpleStatementLine]] = []
        self._stepped: set[str] = set()  # `x` of x.step() and scaler.step(x)
        self._module_like: set[str] = set()  # called (`net(x)`) or given nn.Module calls (`net.train()`)
        # `fc` of fc.zero_grad() / fc.parameters(): candidates for hand-written updates
        self._parameter_receivers: dict[str, None] = {}  # ordered set
        self._checkpoint_calls: list[cst.Call] = []  # calls named like save_checkpoint
        self._reference_calls: list[cst.Call] = []  # calls given a name (`check_accuracy(loader, model)`)
        self._module: cst.Module | None = None
        self._bootstrapped = False
        self._loops: list[cst.For] = []
        self._loop_depth = 0
        self._first_backward: cst.Call | None = None
        self._moves_in_loops: list[cst.Call] = []  # x.cpu() / x.to(...) / x.cuda() inside loops
        self._function_defs: list[cst.FunctionDef] = []
        self._aliases: list[tuple[str, str, cst.Assign]] = []
        self._uses: dict[str, list[int]] = {}
        self._values_of: dict[str, list[cst.BaseExpression]] = {}  # variable -> assigned values
        self._no_use_depth = 0  # inside DataLoader(...) / add_argument(...): not a "use"
        self._side_effect_calls: list[cst.Call] = []  # candidates for side_effects.plan
        self.star_import = False  # `from models import *`: names may come from there

    # ---------------------------------------------------------------- helpers
    def qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def values_of(self, variable: str) -> list[cst.BaseExpression]:
        """Every value assigned to the plain name ``variable`` anywhere in the script."""
        return self._values_of.get(variable, [])

    def module_function(self, name: str) -> cst.FunctionDef | None:
        """The one module-level function this file defines as ``name``; None when there is none
        or several (which one a call runs is then a guess)."""
        found = [f for f in self._function_defs if f.name.value == name and self._owners_of(f) == (None, None)]
        return found[0] if len(found) == 1 else None

    def defines(self, name: str) -> bool:
        """Whether this file defines a function, method or class called ``name``."""
        return name in self._defined

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function around ``node`` (None at module or class level)."""
        return self._owners_of(node)[0]

    # ---------------------------------------------------------------- scopes
    def visit_Module(self, node: cst.Module) -> None:
        self._module = node
        self._find_bootstrap_points(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)
        self._function_defs.append(node)
        self._defined.add(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)
        self._defined.add(node.name.value)
        for base in node.bases:
            if self.qualified(base.value) & names.ITERABLE_DATASET:
                self.facts.manual.append(
                    ManualItem(
                        self.line(node),
                        f"{node.name.value} is an IterableDataset: no sampler can shard it",
                        "make its __iter__ yield only every ddpify.world_size()-th item starting at ddpify.rank()",
                    )
                )

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def _function(self) -> cst.FunctionDef | None:
        return self._functions[-1] if self._functions else None

    def _class(self) -> cst.ClassDef | None:
        return self._classes[-1] if self._classes else None

    # ---------------------------------------------------------------- loops
    def visit_For(self, node: cst.For) -> None:
        self._loops.append(node)
        self._loop_depth += 1
        if self._is_epoch_loop(node):
            if self._epoch_depth == 0:
                self._epoch_loops.append((node, self._function(), self._class()))
            self._epoch_depth += 1

    def visit_While(self, node: cst.While) -> None:
        self._loop_depth += 1

    def leave_While(self, original_node: cst.While) -> None:
        self._loop_depth -= 1

    def leave_For(self, original_node: cst.For) -> None:
        self._loop_depth -= 1
        if self._is_epoch_loop(original_node):
            self._epoch_depth -= 1

    def _is_epoch_loop(self, loop: cst.For) -> bool:
        """``for epoch in ...``, or ``for t in range(args.epochs)``: a loop counting epochs
        under another name (the range bound says what it counts; ``range(max_steps)`` does not)."""
        if not isinstance(loop.target, cst.Name):
            return False
        if names.EPOCH_VARIABLE.search(loop.target.value):
            return True
        bound = loop.iter
        if not (isinstance(bound, cst.Call) and "builtins.range" in self.qualified(bound)):
            return False
        mentioned = [n.value for arg in bound.args for n in of_types(arg.value, cst.Name)]  # type: ignore[attr-defined]
        return any(names.EPOCH_COUNT.search(name) and not names.NOT_EPOCH_COUNT.search(name) for name in mentioned)

    # ---------------------------------------------------------------- calls
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._note_import(code(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star_import = True
        if node.module is not None and node.relative == ():
            self._note_import(code(node.module))

    def _note_import(self, module: str) -> None:
        if module == names.RUNTIME_MODULE or module.startswith(names.RUNTIME_MODULE + "."):
            self.facts.already_converted = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._values_of.setdefault(node.target.value, []).append(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._values_of.setdefault(target.target.value, []).append(node.value)
        if len(node.targets) == 1 and is_simple_reference(node.targets[0].target) and is_simple_reference(node.value):
            self._aliases.append((code(node.targets[0].target), code(node.value), node))
        statement = self.parent(node)
        if isinstance(node.value, cst.Call) and isinstance(statement, cst.SimpleStatementLine):
            self._call_assignments.append((node, statement))

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.parent(node)
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
        parent = self.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.For)) or (isinstance(parent, cst.AnnAssign) and parent.target is node):
            return
        self._uses.setdefault(code(node), []).append(self.line(node))

    def leave_Call(self, original_node: cst.Call) -> None:
        if self._ignores_uses(original_node):
            self._no_use_depth -= 1

    def _ignores_uses(self, node: cst.Call) -> bool:
        return bool(self.qualified(node) & names.DATALOADER) or attribute_name(node.func) == "add_argument"

    def visit_Call(self, node: cst.Call) -> None:
        if self._ignores_uses(node):
            self._no_use_depth += 1
        qualified = self.qualified(node)
        if qualified & names.DATALOADER:
            self.facts.has_training_code = True
            self._collect_loader(node)
        elif names.is_optimizer(qualified):
            self.facts.has_training_code = True
            self._optimizer_calls.append(node)
        elif qualified & names.DATAPARALLEL and node.args and is_simple_reference(node.args[0].value):
            self._note_model(node.args[0].value)
        elif qualified & {"ddpify.runtime.setup", "ddpify.runtime.distributed"}:
            self._bootstrapped = True
        elif "ddpify.runtime.prepare_model" in qualified and node.args:
            self._existing_wraps.setdefault(code(node.args[0].value), node)
        elif "ddpify.runtime.shard" in qualified and node.args:
            self._existing_shards.add(code(node.args[0].value))
        elif attribute_name(node.func) == "set_epoch" or "ddpify.runtime.set_epoch" in qualified:
            self._existing_set_epoch.append((node, code(node)))
        if _downloads(node):
            self._note_download(node)
        if side_effects.is_candidate(node, qualified):
            self._side_effect_calls.append(node)
        if attribute_name(node.func) == "backward" and self._first_backward is None:
            self._first_backward = node
        if self._loop_depth and attribute_name(node.func) in ("cpu", "to", "cuda"):
            self._moves_in_loops.append(node)
        self._note_module_like_use(node)
        if _callee(node) and names.CHECKPOINT_HELPER.search(_callee(node)) and not names.NOT_A_SAVE.search(_callee(node)):
            self._checkpoint_calls.append(node)
        if any(is_simple_reference(a.value) for a in node.args):
            self._reference_calls.append(node)
        if isinstance(node.func, cst.Name):
            self._factory_calls.append((node, node.func.value))
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            self._method_calls.append((node, node.func.attr.value))  # type: ignore[attr-defined]

    def _note_module_like_use(self, call: cst.Call) -> None:
        func = call.func
        if is_simple_reference(func):
            self._module_like.add(code(func))
        if isinstance(func, cst.Attribute):
            if func.attr.value == "step":
                self._stepped.add(code(func.value))
                self._stepped.update(code(a.value) for a in call.args[:1])
            elif func.attr.value in _MODULE_CALLS:
                self._module_like.add(code(func.value))
            if func.attr.value in {"zero_grad", "parameters", "named_parameters"} and is_simple_reference(func.value):
                self._parameter_receivers.setdefault(code(func.value))

    def _note_download(self, call: cst.Call) -> None:
        statement: cst.CSTNode | None = None
        for ancestor in self._ancestors(call):
            if isinstance(ancestor, cst.With) and "main_process_first" in code(ancestor.items[0]):
                return
            if isinstance(ancestor, cst.SimpleStatementLine) and statement is None:
                statement = ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                break
        if isinstance(statement, cst.SimpleStatementLine):
            self.facts.downloads.add(statement)

    def _ancestors(self, node: cst.CSTNode):  # type: ignore[no-untyped-def]
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def _report_manual_updates(self, backward: cst.Call) -> None:
        """Hand-written updates (``p.data -= lr * p.grad``): no optimizer says which model is
        trained, so the item names the candidates (``fc`` of ``fc.zero_grad()`` /
        ``fc.parameters()``) instead of wrapping a guess. No line numbers in the text: an
        ``--annotate`` comment must read the same when the output is converted again."""
        named = ", ".join(self._parameter_receivers)
        model = next(iter(self._parameter_receivers), "model")
        self.facts.manual.append(
            ManualItem(
                self.line(backward),
                f"training without a torch.optim optimizer: ddpify cannot tell which model is trained{f' (parameters updated by hand: {named})' if named else ''}",
                f"wrap it after it is built: {model} = ddpify.prepare_model({model}) (the gradients are then averaged across ranks)",
            )
        )

    def _optimizer_builders(self) -> list[tuple[cst.Call, cst.Name]]:
        """``optimizer = build_optimizer(model, args)`` and later ``optimizer.step()`` (a target
        named like an optimizer): the parameters reach the optimizer inside the helper, so the
        arguments used like modules elsewhere (called, or given ``.train()``, ``.to()``,
        ``.parameters()``...) are trained models; ``args`` is not."""
        found: list[tuple[cst.Call, cst.Name]] = []
        for assign, _ in self._call_assignments:
            call = assign.value
            assert isinstance(call, cst.Call)
            target = code(assign.targets[0].target) if len(assign.targets) == 1 else ""
            if target not in self._stepped or not names.OPTIMIZER_VARIABLE.search(target) or call in self._optimizer_calls:
                continue
            found.extend((call, a.value) for a in call.args if isinstance(a.value, cst.Name) and a.value.value in self._module_like)
        return found

    def _note_model(self, reference: cst.BaseExpression) -> None:
        """``reference`` is a trained (or DataParallel) model: its key, and for a plain name the
        scopes that bind it (see Facts.model_scopes)."""
        key = code(reference)
        self.facts.model_keys.add(key)
        bindings = self.get_metadata(BindingProvider, reference, None) if isinstance(reference, cst.Name) else None
        if bindings is not None:
            self.facts.model_scopes.setdefault(key, set()).update(b.scope for b in bindings)

    def _parameter_owners(self, optimizer: cst.Call) -> list[cst.BaseExpression]:
        """Models whose ``.parameters()`` an optimizer receives (these are the trained ones),
        also through variables: ``params = list(a.parameters()) + ...; Adam(params)``."""
        owners: list[cst.BaseExpression] = []
        pending: list[cst.CSTNode] = [arg.value for arg in optimizer.args]
        followed: set[str] = set()
        while pending:
            expression = pending.pop()
            for call in of_types(expression, cst.Call):
                if attribute_name(call.func) not in ("parameters", "named_parameters"):
                    continue
                owner = call.func.value  # type: ignore[attr-defined]
                if is_simple_reference(owner) and code(owner) not in {code(o) for o in owners}:
                    owners.append(owner)
            for name in of_types(expression, cst.Name):
                variable = name.value  # type: ignore[attr-defined]
                if variable not in followed:
                    followed.add(variable)
                    pending.extend(self._values_of.get(variable, []))
        return owners

    # ---------------------------------------------------------------- loaders
    def _collect_loader(self, call: cst.Call) -> None:
        key, factory = self._loader_target(call)
        shuffle = _keyword(call, "shuffle")
        role, reason = _classify_loader(key or factory, shuffle)
        fact = LoaderFact(call, key, role, reason, self.line(call))
        batch = _keyword(call, "batch_size")
        if batch is None and len(call.args) > 1 and call.args[1].keyword is None and not call.args[1].star:
            batch = call.args[1].value
        if batch is not None and is_simple_reference(batch):
            fact.batch_expression = code(batch)
        self.facts.loaders[call] = fact
        if key is not None:
            self._loader_keys.append((key, role, self._function(), self._class()))
            self._loader_lines.setdefault(key, self.line(call))
        if factory is not None:
            self._loader_factories[factory] = role

    def _loader_target(self, call: cst.Call) -> tuple[str | None, str | None]:
        """(variable the loader is stored in, or name of the function that returns it)."""
        parent = self.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if is_simple_reference(target):
                return code(target), None
        if isinstance(parent, (cst.AnnAssign,)) and is_simple_reference(parent.target):
            return code(parent.target), None
        if isinstance(parent, cst.Return) and self._function() is not None:
            return None, self._function().name.value  # type: ignore[union-attr]
        return None, None

    # ---------------------------------------------------------------- finish
    def leave_Module(self, original_node: cst.Module) -> None:
        builders = self._optimizer_builders()
        if self._first_backward is not None and not self._optimizer_calls and not builders:
            # hand-written updates (p.data -= lr * p.grad): training, but no optimizer tells
            # ddpify which model it is
            self.facts.has_training_code = True
            self._report_manual_updates(self._first_backward)
        for builder, model in builders:
            self._optimizers.append((builder, code(model)))
            self._note_model(model)
        for optimizer in self._optimizer_calls:
            for owner in self._parameter_owners(optimizer):
                self._optimizers.append((optimizer, code(owner)))
                self._note_model(owner)
        for fact in self.facts.loaders.values():
            if fact.role == "train" and fact.batch_expression in self._uses:
                fact.batch_used_at = self._uses[fact.batch_expression][0]
        self._resolve_loader_factories()
        self._collect_helper_loaders()
        self._follow_loader_aliases()
        self._plan_model_wraps()
        self._report_conditional_training()
        self._plan_set_epoch()
        self._plan_accumulation()
        self._plan_unsharded_evaluation()
        self._plan_checkpoint_helpers()
        self._report_moves_after_wrap()
        side_effects.plan(self, self._side_effect_calls)
        self._report_handed_to_other_files()
        if self._bootstrapped:
            self.facts.main_guard = None
            self.facts.setup_after = None

    def _resolve_loader_factories(self) -> None:
        """``self.train_loader = build_loader(...)``: the variable of a helper's loader."""
        for call, function in self._factory_calls:
            role = self._loader_factories.get(function)
            if role is None:
                continue
            parent = self.parent(call)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                target = parent.targets[0].target
                if is_simple_reference(target):
                    key = code(target)
                    self._loader_keys.append((key, role, *self._owners_of(call)))
                    self._loader_lines.setdefault(key, self.line(call))
                    if role == "train" and names.EVAL_LOADER.search(key) and not names.TRAIN_LOADER.search(key):
                        self.facts.manual.append(
                            ManualItem(
                                self.line(call),
                                f"{key} comes from {function}(), whose loader is sharded for training",
                                "evaluation on this loader sees 1/world_size of the data: reduce the metric sums with torch.distributed.all_reduce, or build it with a plain DataLoader",
                            )
                        )

    def _collect_helper_loaders(self) -> None:
        """``train_loader, val_loader = get_loaders(...)`` with ``get_loaders`` imported: the
        DataLoader is built in another file, so the training one is rebuilt here at run time
        (``ddpify.shard``). Loader-named targets only; in a tuple only the one named for
        training, a single target is classified like a DataLoader (name, then the ``shuffle=``
        given to the helper)."""
        for assign, statement in self._call_assignments:
            call = assign.value
            assert isinstance(call, cst.Call)
            helper = self._opaque_helper(call)
            if helper is None:
                continue
            for key, role, reason in self._helper_loader_targets(assign, call):
                if role == "eval":
                    self.facts.changes.append(
                        Change(
                            self.line(call), f"{key} is an evaluation loader ({reason}): left unsharded, every rank evaluates the full set"
                        )
                    )
                elif key not in self._existing_shards:
                    self.facts.helper_loaders.append(HelperLoader(statement, key, helper, self.line(call)))
                    self._loader_keys.append((key, "train", *self._owners_of(call)))
                    self._loader_lines.setdefault(key, self.line(call))

    def _opaque_helper(self, call: cst.Call) -> str | None:
        """``get_loaders`` for a call of a function this file does not define (imported, or a
        method of an object built elsewhere); None for local code, builtins, DataLoader itself
        and ddpify's own helpers."""
        name = _callee(call)
        if name is None or name in self._defined:
            return None
        qualified = self.get_metadata(QualifiedNameProvider, call, set())
        if any(
            q.source is QualifiedNameSource.BUILTIN or q.name in names.DATALOADER or q.name.startswith(names.RUNTIME_MODULE + ".")
            for q in qualified
        ):
            return None
        return code(call.func)

    def _project_helper(self, call: cst.Call) -> str | None:
        """``save_checkpoint`` for a function of the project's own modules (``from utils import
        save_checkpoint``, ``utils.save_checkpoint``, a star import); None for this file's code,
        its variables' methods, the standard library and known libraries (names.LIBRARY_MODULES)."""
        helper = self._opaque_helper(call)
        for qualified in self.get_metadata(QualifiedNameProvider, call, set()):
            top = qualified.name.split(".")[0]
            if qualified.source is QualifiedNameSource.LOCAL or top in sys.stdlib_module_names or top in names.LIBRARY_MODULES:
                return None
        return helper

    def _plan_checkpoint_helpers(self) -> None:
        """``save_checkpoint(state)`` from the project's utils writes a file: every rank would
        write it (a race on one path), so the statement runs on rank 0 only, with trained models
        passed unwrapped (no ``module.`` keys, no pickled DDP wrapper). Its code is in another
        file, so whether it calls collectives (which would hang the other ranks) is reported."""
        for call in self._checkpoint_calls:
            helper = self._project_helper(call)
            if helper is None or self._behind_rank_test(call):
                continue
            expression = self.parent(call)
            statement = self.parent(expression) if isinstance(expression, cst.Expr) else None
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                self.facts.manual.append(
                    ManualItem(
                        self.line(call),
                        f"{helper}() writes a checkpoint in another file, and its result is used here",
                        "run the write on rank 0 only (if ddpify.is_main_process():) and give it ddpify.unwrap(model)",
                    )
                )
                continue
            self.facts.rank_zero_helpers[statement] = helper
            self.facts.unwrapped_args.update(a for a in call.args if code(a.value) in self.facts.model_keys)

    def _report_handed_to_other_files(self) -> None:
        """``check_accuracy(val_loader, model)`` imported from the project's own modules: its body
        is invisible, so the prints and writes in it, which now happen once per rank, are reported
        once per function. Calls the conversion already handles (checkpoint helpers, loads,
        optimizer builders, guarded statements) and this file's own functions are not."""
        reported: set[str] = set()
        handled = set(self._checkpoint_calls) | {builder for builder, _ in self._optimizer_builders()}
        for call in self._reference_calls:
            helper = self._imported_helper(call)
            if helper is None or helper in reported or call in handled or self._rewritten(call):
                continue
            handed = self._handed_over(call)
            if handed:
                reported.add(helper)
                self.facts.manual.append(
                    ManualItem(
                        self.line(call),
                        f"{helper}() (another file) runs on every rank with {', '.join(handed)}: "
                        "prints or writes inside it happen once per rank",
                        _handed_over_todo(handed),
                    )
                )

    def _imported_helper(self, call: cst.Call) -> str | None:
        """A project helper (see _project_helper) that is imported, or a plain name a star
        import may have brought; not a method of an object this file cannot name."""
        helper = self._project_helper(call)
        qualified = self.get_metadata(QualifiedNameProvider, call, set())
        if helper is None or _callee(call) in _HARMLESS_CALLS or _LOADS_INTO.search(helper):
            return None
        if any(q.source is QualifiedNameSource.IMPORT for q in qualified):
            return helper
        return helper if not qualified and self.star_import and isinstance(call.func, cst.Name) else None

    def _rewritten(self, call: cst.Call) -> bool:
        """Guarded (by the script or the conversion) or given rewritten arguments already."""
        statement = self.parent(self.parent(call) or call)
        return (
            statement in self.facts.main_process_only
            or any(a in self.facts.unwrapped_args or a in self.facts.unsharded_args for a in call.args)
            or self._behind_rank_test(call)
        )

    def _handed_over(self, call: cst.Call) -> list[str]:
        """The trained models (once wrapped) and loaders among ``call``'s arguments, as text
        whose suffix says what to do (see _handed_over_todo)."""
        loaders = {key: role for key, role, _, _ in self._loader_keys}
        handed: list[str] = []
        for arg in call.args:
            key = code(arg.value)
            if key in self.facts.model_keys and not self._before_wrap(call, key):
                handed.append(f"{key} (the DDP model)")
            elif key in loaders:
                handed.append(f"{key} (a {'sharded training' if loaders[key] == 'train' else 'full evaluation'} loader)")
        return handed

    def _before_wrap(self, call: cst.Call, key: str) -> bool:
        """``init_weights(model)`` above ``model = ddpify.prepare_model(model)`` (planned, or
        there already) in the same function: the plain model, still being built."""
        wraps = [(anchor, where) for wrapped, anchor, where in self.facts.model_wraps if wrapped == key]
        if key in self._existing_wraps:
            wraps.append((self._existing_wraps[key], "after"))
        for anchor, where in wraps:
            if self.function_of(anchor) is self.function_of(call):
                position = self.get_metadata(PositionProvider, anchor)
                return self.line(call) < (position.start.line if where == "before" else position.end.line + 1)
        return False

    def _behind_rank_test(self, node: cst.CSTNode) -> bool:
        return any(isinstance(a, cst.If) and names.RANK_TEST.search(code(a.test)) for a in self._ancestors(node))

    def _helper_loader_targets(self, assign: cst.Assign, call: cst.Call) -> list[tuple[str, Role, str]]:
        """(key, role, why) for the loader-named targets a helper's result is stored in."""
        found: list[tuple[str, Role, str]] = []
        for target in assign.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)):
                for element in target.target.elements:
                    key = code(element.value)
                    last = key.split(".")[-1]
                    named = names.TRAIN_LOADER.search(last) or names.EVAL_LOADER.search(last)
                    if is_simple_reference(element.value) and names.LOADER_VARIABLE.search(last) and named:
                        found.append((key, *_classify_loader(key, None)))
            elif is_simple_reference(target.target) and names.LOADER_VARIABLE.search(code(target.target).split(".")[-1]):
                key = code(target.target)
                found.append((key, *_classify_loader(key, _keyword(call, "shuffle"))))
        return found

    def _follow_loader_aliases(self) -> None:
        """``self.train_loader = train_loader`` (e.g. a constructor argument) is the same loader.

        Matching is by the last name component, so a loader handed to ``Trainer.__init__`` as a
        parameter of the same name is followed too."""
        known = {key.split(".")[-1]: role for key, role, _, _ in self._loader_keys}
        for target, value, node in self._aliases:
            role = known.get(value.split(".")[-1])
            if role is not None and target not in {k for k, *_ in self._loader_keys}:
                self._loader_keys.append((target, role, *self._owners_of(node)))
                self._loader_lines.setdefault(target, self.line(node))

    def _owners_of(self, node: cst.CSTNode) -> tuple[cst.FunctionDef | None, cst.ClassDef | None]:
        function: cst.FunctionDef | None = None
        klass: cst.ClassDef | None = None
        current = self.parent(node)
        while current is not None:
            if isinstance(current, cst.FunctionDef) and function is None:
                function = current
            elif isinstance(current, cst.ClassDef):
                klass = current
                break
            current = self.parent(current)
        return function, klass

    def _plan_set_epoch(self) -> None:
        """Each epoch loop reshuffles the training loaders it can see; when its body names some
        of them, just those (a loop over ``aux_loader`` leaves ``train_loader`` alone)."""
        train_keys = [k for k in self._loader_keys if k[1] == "train"]
        placed: set[str] = set()
        for loop, function, klass in self._epoch_loops:
            visible = list(dict.fromkeys(key for key, _, f, c in train_keys if _visible(key, f, c, function, klass)))
            loop_text = code(loop.body)
            mentioned = [k for k in visible if re.search(rf"(?<![\w.]){re.escape(k)}(?!\w)", loop_text)]
            keys = [k for k in (mentioned or visible) if not self._has_set_epoch(loop, k)]
            if keys:
                self.facts.set_epoch[loop] = keys
                placed.update(keys)
        if placed or self._existing_set_epoch:
            return
        for key, _, _, _ in train_keys:
            if key in self._loader_lines:
                self.facts.changes.append(
                    Change(
                        self._loader_lines[key],
                        f"no epoch loop found around {key}: the runtime advances its sampler's epoch on every pass instead",
                    )
                )

    def _plan_accumulation(self) -> None:
        """A loop that calls backward() every iteration but steps the optimizer only under a
        ``%`` test accumulates gradients: its other micro-batches should skip DDP's all-reduce."""
        for loop in self._loops:
            if not isinstance(loop.body, cst.IndentedBlock):
                continue
            statements = list(loop.body.body)
            if not [c for c in _find_outside_definitions(loop.body, cst.Call) if attribute_name(c.func) == "backward"]:
                continue
            gate = next((s for s in statements if isinstance(s, cst.If) and _steps_under_modulo(s)), None)
            if gate is None:
                continue
            text = code(loop.body)
            if "no_sync" in text or "sync_gradients" in text:
                continue
            assigned = {code(t) for s in statements for t in _targets(s)}
            used = {n.value for n in of_types(gate.test, cst.Name)}  # type: ignore[attr-defined]
            forwarded = [k for k in self.facts.model_keys if any(code(c.func) == k for c in of_types(loop.body, cst.Call))]  # type: ignore[attr-defined]
            model = forwarded[0] if len(forwarded) == 1 else next(iter(self.facts.model_keys)) if len(self.facts.model_keys) == 1 else None
            if used & assigned or model is None:
                self.facts.manual.append(
                    ManualItem(
                        self.line(gate),
                        "gradient accumulation: every micro-batch all-reduces its gradients",
                        "run the non-stepping micro-batches' forward and backward under model.no_sync() (ddpify.sync_gradients(model, when=<steps now>))",
                    )
                )
                continue
            self.facts.accumulation[loop] = (model, code(gate.test))

    def _report_moves_after_wrap(self) -> None:
        """``model.eval().cpu()`` ... ``model.to(device).train()`` inside the training loop
        (around a checkpoint): DDP's gradient buckets live on the device it wrapped the model
        on, so the moves are dropped (the checkpoint keeps the training device; loads get
        map_location) when the chain only moves and switches modes; otherwise reported."""
        wrapped = {key for key, _, _ in self.facts.model_wraps}
        for call in self._moves_in_loops:
            receiver, links = call.func.value, [call]  # type: ignore[attr-defined]
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
                links.append(receiver)
                receiver = receiver.func.value  # model.eval().cpu(): the chain's start
            if code(receiver) not in wrapped:
                continue
            if all(c.func.attr.value in _MODE_OR_MOVE for c in links):  # type: ignore[attr-defined]
                self.facts.dropped_moves.add(call)
            else:
                self.facts.manual.append(
                    ManualItem(
                        self.line(call),
                        f"{code(receiver)} is moved between devices after the DDP wrap",
                        f"keep it on its device: save ddpify.unwrap({code(receiver)}).state_dict() directly (load with map_location)",
                    )
                )

    def _plan_unsharded_evaluation(self) -> None:
        """``calc_accuracy(train_loader, model)``: evaluation code (a loop over a loader
        parameter, no backward, no step) given a *training* loader would score one shard."""
        evaluators = {f.name.value: _evaluated_parameters(f) for f in self._function_defs}
        evaluators = {name: params for name, params in evaluators.items() if params}
        if not evaluators:
            return
        train = {key.split(".")[-1] for key, role, _, _ in self._loader_keys if role == "train"}
        for call, _ in self._factory_calls + self._method_calls:
            function = call.func.value if isinstance(call.func, cst.Name) else call.func.attr.value  # type: ignore[attr-defined]
            params = evaluators.get(function)
            if not params:
                continue
            for position, arg in enumerate(call.args):
                named = arg.keyword.value if arg.keyword is not None else None
                evaluated = named in params.values() if named else position in params
                if evaluated and is_simple_reference(arg.value) and code(arg.value).split(".")[-1] in train:
                    self.facts.unsharded_args.add(arg)

    def _has_set_epoch(self, loop: cst.For, key: str) -> bool:
        inside = set(of_types(loop, cst.Call))
        return any(call in inside and key in text for call, text in self._existing_set_epoch)

    def _plan_model_wraps(self) -> None:
        seen: set[str] = set()
        for optimizer, key in self._optimizers:
            if key in seen or key in self._existing_wraps:
                continue
            seen.add(key)
            spot = self._wrap_spot(optimizer, key)
            if spot is None:
                self.facts.manual.append(self._unwrappable(optimizer, key))
                continue
            anchor, where = spot
            self.facts.model_wraps.append((key, anchor, where))

    def _unwrappable(self, optimizer: cst.Call, key: str) -> ManualItem:
        """Why a trained module gets no wrap: built in another function, or only a part
        (``encoder.linear``) of a model this function holds is trained -- DDP over the whole
        model would then wait forever for the gradients of the untrained rest."""
        head, _, part = key.partition(".")
        if part and head != "self" and self._binds(self.function_of(optimizer), head):
            return ManualItem(
                self.line(optimizer),
                f"only {key} of {head} reaches the optimizer: {head} wrapped whole would wait for gradients its other parameters never get",
                f"freeze the rest ({head}.requires_grad_(False), then {key}.requires_grad_(True)) before "
                f"{head} = ddpify.prepare_model({head}), or wrap with find_unused_parameters=True",
            )
        return ManualItem(
            self.line(optimizer),
            f"{key} is trained here but built outside this function",
            f"wrap it where it is built: {key} = ddpify.prepare_model({key})",
        )

    def _binds(self, function: cst.FunctionDef | None, name: str) -> bool:
        """Whether ``function`` (None: the module's own statements) assigns ``name``."""
        if function is not None:
            return _assigns_locally(function, name)
        assert self._module is not None
        statements = [s for s in self._module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        return any(code(target) == name for statement in statements for target in _targets(statement))

    def _report_conditional_training(self) -> None:
        """``Adam(encoder.parameters()) if fine_tune else None``: the model is wrapped, and
        ``ddpify.prepare_model`` leaves a model without trainable parameters unwrapped (DDP
        rejects one), so whether it is trained in DDP depends on its flags at the wrap."""
        wrapped = {key for key, _, _ in self.facts.model_wraps} | self._existing_wraps.keys()
        reported: set[str] = set()
        for optimizer in self._optimizer_calls:
            condition = self._optimizer_condition(optimizer)
            for owner in self._parameter_owners(optimizer) if condition else ():
                key = code(owner)
                if key in wrapped and key not in reported:
                    reported.add(key)
                    self.facts.manual.append(
                        ManualItem(
                            self.line(optimizer),
                            f"{key} is trained only when {condition} (its optimizer is conditional): "
                            "ddpify.prepare_model wraps it only if it has trainable parameters at that point",
                            f"make its parameters trainable before ddpify.prepare_model({key}) when it is trained; "
                            "one unfrozen after the wrap trains unwrapped, its gradients never averaged",
                        )
                    )

    def _optimizer_condition(self, optimizer: cst.Call) -> str | None:
        """``fine_tune is true`` for ``Adam(...) if fine_tune else None`` (``... is false`` for
        ``None if frozen else Adam(...)``); None for an optimizer always built."""
        choice = self.parent(optimizer)
        if not isinstance(choice, cst.IfExp):
            return None
        other = choice.orelse if choice.body is optimizer else choice.body
        if not (isinstance(other, cst.Name) and other.value == "None"):
            return None
        return f"{code(choice.test)} is {'true' if choice.body is optimizer else 'false'}"

    def _wrap_spot(self, optimizer: cst.Call, key: str) -> tuple[cst.CSTNode, str] | None:
        """Where ``key = ddpify.prepare_model(key)`` goes: after the model is built, moved and
        loaded, before the first loop, forward call or return that follows."""
        for statement, body in self._enclosing_statements(optimizer, stop_at_function=key.startswith("self.")):
            index = body.index(statement)
            anchor = next((j for j in range(index, -1, -1) if _assigns(body[j], key)), None)
            if anchor is not None and not self._built_in_each_branch(statement, key):
                # after the optimizer too: DDP must see the final requires_grad flags and modules
                return _before_first_stop(body, index, key)
        if key.startswith("self."):
            klass = self._owners_of(optimizer)[1]
            if klass is not None:
                return self._wrap_spot_in_methods(klass, key)
        return None

    def _built_in_each_branch(self, statement: cst.CSTNode, key: str) -> bool:
        """``if checkpoint is None: model = Net() ... else: model = checkpoint["model"]``: the
        model is wrapped after the whole ``if``, where both branches' models arrive."""
        block = self.parent(statement)
        branch = self.parent(block) if isinstance(block, cst.IndentedBlock) else None
        test = self.parent(branch) if isinstance(branch, cst.Else) else branch
        if not isinstance(test, cst.If) or test.orelse is None:
            return False
        return _assigns(test.with_changes(orelse=None), key) and _assigns(test.orelse, key)

    def _wrap_spot_in_methods(self, klass: cst.ClassDef, key: str) -> tuple[cst.CSTNode, str] | None:
        methods = [s for s in klass.body.body if isinstance(s, cst.FunctionDef)]
        methods.sort(key=lambda f: f.name.value != "__init__")
        for method in methods:
            body = list(method.body.body) if isinstance(method.body, cst.IndentedBlock) else []
            anchor = next((j for j in range(len(body) - 1, -1, -1) if _assigns(body[j], key)), None)
            if anchor is not None:
                return _before_first_stop(body, anchor, key)
        return None

    def _enclosing_statements(self, node: cst.CSTNode, *, stop_at_function: bool) -> list[tuple[cst.CSTNode, list[cst.CSTNode]]]:
        """(statement, the statement list it stands in), innermost first."""
        found: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = []
        current: cst.CSTNode | None = node
        while current is not None:
            parent = self.parent(current)
            if isinstance(parent, (cst.IndentedBlock, cst.Module)) and isinstance(current, cst.BaseStatement):
                found.append((current, list(parent.body)))
            if isinstance(current, cst.FunctionDef) and stop_at_function:
                break
            if isinstance(current, cst.ClassDef):
                break
            current = parent
        return found

    def _find_bootstrap_points(self, module: cst.Module) -> None:
        last_import: cst.CSTNode | None = None
        in_prefix = True
        for statement in module.body:
            if _is_main_guard(statement):
                self.facts.main_guard = statement  # type: ignore[assignment]
            if not in_prefix:
                continue
            if single_statement(statement, cst.Import, cst.ImportFrom):
                last_import = statement
            elif last_import is not None or not _is_docstring(statement):
                in_prefix = last_import is None
        self.facts.setup_after = last_import


_MODE_OR_MOVE = frozenset({"cpu", "to", "cuda", "eval", "train"})
# nn.Module methods whose receiver is a model (for optimizers built by helpers)
_MODULE_CALLS = frozenset({"train", "eval", "to", "cuda", "parameters", "named_parameters", "forward", "apply"})


def _callee(call: cst.Call) -> str | None:
    """The called function's own name: ``save`` for ``save(...)`` and ``utils.save(...)``."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    return func.attr.value if isinstance(func, cst.Attribute) else None


def _handed_over_todo(handed: list[str]) -> str:
    """What to do about a function of another file given ``handed`` (see _handed_over)."""
    todo = "guard its prints and writes inside it (if ddpify.is_main_process():)"
    if any(h.endswith("(the DDP model)") for h in handed):
        todo += ", not the call: every rank must run the DDP model's forward"
    if any(h.endswith("training loader)") for h in handed):
        todo += "; a metric it computes over the sharded loader covers one rank's shard: reduce it (torch.distributed.all_reduce)"
    return todo


def _evaluated_parameters(function: cst.FunctionDef) -> dict[int, str]:
    """Positions of the parameters an evaluation function loops over (no backward, no step)."""
    body = function.body
    if any(attribute_name(c.func) in ("backward", "step") for c in _find_outside_definitions(body, cst.Call)):
        return {}
    params = [p.name.value for p in function.params.params]
    if params[:1] == ["self"]:
        params = params[1:]
    looped: set[str] = set()
    for loop in _find_outside_definitions(body, cst.For):
        iterated = loop.iter  # type: ignore[attr-defined]
        if isinstance(iterated, cst.Call) and iterated.args:
            iterated = iterated.args[0].value
        if isinstance(iterated, cst.Name):
            looped.add(iterated.value)
    return {i: name for i, name in enumerate(params) if name in looped}


def _steps_under_modulo(gate: cst.If) -> bool:
    """``if (i + 1) % accumulate == 0: optimizer.step()``."""
    return has_binary_operator(gate.test, cst.Modulo) and any(attribute_name(c.func) == "step" for c in of_types(gate.body, cst.Call))


def _downloads(call: cst.Call) -> bool:
    """``download=<anything but False>`` or ``.from_pretrained(...)``: fetches files."""
    download = _keyword(call, "download")
    if download is not None:
        return not (isinstance(download, cst.Name) and download.value == "False")
    return attribute_name(call.func) == "from_pretrained"


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _classify_loader(name: str | None, shuffle: cst.BaseExpression | None) -> tuple[Role, str]:
    """Training loaders are sharded, evaluation loaders are not (see README, "Evaluation")."""
    if name and names.EVAL_LOADER.search(name.split(".")[-1]):
        return "eval", f"named {name}"
    if name and names.TRAIN_LOADER.search(name.split(".")[-1]):
        return "train", f"named {name}"
    if isinstance(shuffle, cst.Name) and shuffle.value == "True":
        return "train", "shuffle=True"
    if isinstance(shuffle, cst.Name) and shuffle.value == "False":
        return "eval", "shuffle=False"
    return "train", "no name or shuffle flag says otherwise"


def _targets(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """Everything ``statement`` binds: plain, annotated and augmented (``step += 1``) targets."""
    targets: list[cst.BaseExpression] = []
    for assign in of_types(statement, cst.Assign, cst.AnnAssign, cst.AugAssign):
        if isinstance(assign, cst.AugAssign):
            targets.append(assign.target)
        elif isinstance(assign, cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, (cst.Tuple, cst.List)):
                    targets.extend(e.value for e in target.target.elements)
                else:
                    targets.append(target.target)
        else:
            targets.append(assign.target)  # type: ignore[union-attr]
    return targets


def _assigns(statement: cst.CSTNode, key: str) -> bool:
    """Whether ``statement`` binds ``key`` outside any nested function, class or loop."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While)):
        return False
    return any(code(target) == key for target in _targets(statement))


def _visible(
    key: str,
    owner_function: cst.FunctionDef | None,
    owner_class: cst.ClassDef | None,
    function: cst.FunctionDef | None,
    klass: cst.ClassDef | None,
) -> bool:
    """Whether a loader stored in ``key`` can be named from code in ``function``."""
    if key.startswith("self."):
        return klass is not None and owner_class is klass and function is not None
    if owner_function is None:
        return not _assigns_locally(function, key)
    return owner_function is function


def _assigns_locally(function: cst.FunctionDef | None, key: str) -> bool:
    if function is None:
        return False
    return any(code(target) == key for target in _targets(function.body))


# Calls that take the model as an argument without training it.
_HARMLESS_CALLS = frozenset(
    {
        "print",
        "len",
        "isinstance",
        "str",
        "repr",
        "type",
        "id",
        "hasattr",
        "getattr",
        "setattr",
        "watch",
        "summary",
        "count_parameters",
        "info",
        "debug",
        "log",
    }
)
# Helpers that load weights into the model they are given (load_checkpoint(ckpt, model)): the
# model is wrapped after them, so they load into the plain module (no "module." keys).
_LOADS_INTO = re.compile(r"load|restore", re.I)


def _is_stop(statement: cst.CSTNode, key: str) -> bool:
    """A statement the model must already be wrapped for: a loop, a return, a forward call, or
    a call that hands the model to other code (``train(model, ...)``). Definitions are not:
    their bodies do not run there. Moving (``.to``), configuring and loading the model are not
    either."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    if _find_outside_definitions(statement, cst.For, cst.While, cst.Return):
        return True
    for call in _find_outside_definitions(statement, cst.Call):
        assert isinstance(call, cst.Call)
        if code(call.func) in (key, f"{key}.forward"):
            return True
        callee = code(call.func).split(".")[-1]
        if callee not in _HARMLESS_CALLS and not _LOADS_INTO.search(callee) and any(code(arg.value) == key for arg in call.args):
            return True
    return False


def _find_outside_definitions(statement: cst.CSTNode, *kinds: type) -> list[cst.CSTNode]:
    """Nodes of these classes in ``statement`` that run there: not inside a nested def,
    class or lambda."""
    definitions = of_types(statement, cst.FunctionDef, cst.ClassDef, cst.Lambda)
    inside = {id(n) for d in definitions for n in of_types(d, *kinds)}
    return [n for n in of_types(statement, *kinds) if id(n) not in inside]


def _is_docstring(line: cst.CSTNode) -> bool:
    return single_statement(line, cst.Expr) and isinstance(line.body[0].value, cst.SimpleString)  # type: ignore[union-attr]


def _is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (any string on the right, as written)."""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    return (
        isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
    )


def _before_first_stop(body: Sequence[cst.CSTNode], anchor: int, key: str) -> tuple[cst.CSTNode, str]:
    for index in range(anchor + 1, len(body)):
        if _is_stop(body[index], key):
            return body[index], "before"
    return body[-1], "after"


def collect_facts(wrapper: MetadataWrapper) -> Facts:
    """The converter's read-only fact pass over ``wrapper.module``."""
    collector = FactCollector()
    run_visitor(wrapper, collector)
    return collector.facts
