"""The key layout of a script's checkpoints: which ``state_dict()`` of a DDP-wrapped model
reaches a save (``module.`` keys) or of the plain model (``model.module.state_dict()``), and
which ``load_state_dict`` loads into the wrapper or into the plain model, with the checkpoint
entry it reads (``ckpt["model"]``) or the file (``torch.load(path)``).

DDP007 and DDP008 judge the pairs: a resume checkpoint saved and loaded through an
always-present wrapper has matching keys; one saved from the wrapper and loaded into the plain
model (or the other way round), or whose layout depends on whether this run wrapped the model,
does not. Computed once per file, shared by both rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from ddpify.analysis.context import is_main_guard
from ddpify.analysis.prefix import PREFIX_HELPER, names_prefix, strips_prefix
from ddpify.check.rule import Rule
from ddpify.check.wraps import ddp_wraps, wrap_sites, wrapped_when
from ddpify.check.writes import is_buffer, is_save_call, root_name, save_destination
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_method_call, is_simple_reference

_LOAD_HELPER = re.compile(r"(^|_)(load|restore|resume)(_|$)", re.I)


@dataclass(frozen=True)
class Save:
    """``M.state_dict()`` (or ``M.module.state_dict()``) whose result reaches a save."""

    call: cst.Call
    model: str
    wrapped: bool  # the wrapper's state ('module.' keys)
    key: str | None  # the checkpoint entry: "model" in {"model": M.state_dict()}
    path: str | None  # the save's destination, when the state_dict goes straight into it


@dataclass(frozen=True)
class Load:
    """``M.load_state_dict(state)``, or a helper of another module handed ``M`` to load into."""

    call: cst.Call
    model: str
    wrapped: bool  # into the wrapper (expects 'module.' keys)
    key: str | None
    path: str | None
    aware: bool  # the code strips or tolerates a 'module.' prefix itself
    helper: bool = False


@dataclass
class Checkpoints:
    saves: list[Save] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    always: dict[str, bool] = field(default_factory=dict)  # model -> wrapped on every path

    def paired(self, save: Save, load: Load) -> bool:
        """Whether ``load`` reads what ``save`` writes: the same checkpoint entry, or (for a
        bare state dict) the same path expression."""
        if save.model != load.model:
            return False
        if save.key is not None or load.key is not None:
            return save.key == load.key
        return save.path is not None and save.path == load.path

    def loads_into_wrapper(self, model: str) -> list[Load]:
        return [load for load in self.loads if load.model == model and load.wrapped]

    def saves_of(self, model: str) -> list[Save]:
        return [save for save in self.saves if save.model == model]


def checkpoints(rule: Rule) -> Checkpoints:
    """The file's checkpoints, computed by the first rule that asks."""
    memo = rule.file.memo
    if "checkpoints" not in memo:
        memo["checkpoints"] = _Collector(rule).collect()
    return memo["checkpoints"]  # type: ignore[return-value]


class _Collector:
    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.source = rule.file.analysis.source
        self.sites = wrap_sites(rule, rule.file.module)

    def collect(self) -> Checkpoints:
        found = Checkpoints()
        if not self.sites:
            return found
        for wrap in ddp_wraps(self.rule, self.rule.file.module):
            found.always[wrap.target] = found.always.get(wrap.target, True) and not wrap.conditional
        wraps = ddp_wraps(self.rule, self.rule.file.module)
        for target in [t for t, always in found.always.items() if not always]:
            if self._data_parallel_too(target):
                found.always[target] = True  # DataParallel in the other runs: 'module.' keys either way
            elif _other_branches_exit([w.statement for w in wraps if w.target == target], self.rule):
                found.always[target] = True  # `else: raise NotImplementedError("DDP only")`
        for call in self.source.calls_by_callee.get("state_dict", []):
            save = self._save(call)
            if save is not None:
                found.saves.append(save)
        for call in self.source.calls_by_callee.get("load_state_dict", []):
            load = self._load(call)
            if load is not None:
                found.loads.append(load)
        for name, calls in self.source.calls_by_callee.items():
            if name == "load_state_dict":
                continue
            for call in calls if _LOAD_HELPER.search(name) else [c for c in calls if self._project_loader(c)]:
                found.loads.extend(self._helper_loads(call))
        return found

    def _data_parallel_too(self, target: str) -> bool:
        """``target = nn.DataParallel(...)`` somewhere: the runs without DDP wrap it too."""
        for _, value in self.source.assignments.get(target, []):
            if isinstance(value, cst.Call):
                inner = value.func.value if isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call) else value
                calls = [value, inner] if isinstance(inner, cst.Call) else [value]
                if any(self.rule.qualified(c) & names.DATAPARALLEL for c in calls):
                    return True
        return False

    # ------------------------------------------------------------ saves
    def _save(self, call: cst.Call) -> Save | None:
        if not is_method_call(call, "state_dict") or call.args:
            return None
        owner = call.func.value  # type: ignore[attr-defined]
        if isinstance(owner, cst.Attribute) and owner.attr.value == "module" and code(owner.value) in self.sites:
            model, wrapped = code(owner.value), False
        elif is_simple_reference(owner) and code(owner) in self.sites:
            model = code(owner)
            wrapped = wrapped_when(self.rule, call, model, self.sites)
            if not wrapped:
                return None  # the plain model before the wrap: no wrapper involved
        else:
            return None
        destination = self._reaches_save(call)
        if destination is False:
            return None
        return Save(call, model, wrapped, self._entry(call), destination if isinstance(destination, str) else None)

    def _reaches_save(self, call: cst.Call) -> str | None | bool:
        """The save's destination text when the state goes straight into a save; None when it
        reaches one through a variable; False when it reaches none."""
        for ancestor in self.rule.ancestors(call):
            if isinstance(ancestor, cst.Call) and is_save_call(self.rule, ancestor):
                destination = save_destination(ancestor)
                if destination is not None and is_buffer(self.rule, destination):
                    return False  # into memory (a checksum, a broadcast): no checkpoint
                return code(destination) if destination is not None else None
            if isinstance(ancestor, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in ancestor.targets] if isinstance(ancestor, cst.Assign) else [ancestor.target]
                roots = {root_name(t) for t in targets} - {None}
                return None if any(self._saved(root) for root in roots) else False  # type: ignore[arg-type]
            if isinstance(ancestor, (cst.BaseStatement, cst.Lambda)):
                return False
        return False

    def _saved(self, name: str) -> bool:
        """Some save of the file receives ``name`` (``torch.save(state, path)``) into a file."""
        for node in self.source.names_by_value.get(name, []):
            for ancestor in self.rule.ancestors(node):
                if isinstance(ancestor, cst.Call) and is_save_call(self.rule, ancestor):
                    destination = save_destination(ancestor)
                    if destination is None or not is_buffer(self.rule, destination):
                        return True
                    break
                if isinstance(ancestor, cst.BaseStatement):
                    break
        return False

    def _entry(self, call: cst.Call) -> str | None:
        """``"model"`` for ``{"model": m.state_dict()}``, ``dict(model=...)``, ``state["model"] = ...``."""
        parent = self.rule.parent(call)
        if isinstance(parent, cst.DictElement) and isinstance(parent.key, cst.SimpleString):
            return str(parent.key.evaluated_value)
        if isinstance(parent, cst.Arg) and parent.keyword is not None:
            holder = self.rule.parent(parent)
            if isinstance(holder, cst.Call) and isinstance(holder.func, cst.Name) and holder.func.value == "dict":
                return parent.keyword.value
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return _subscript_key(parent.targets[0].target)
        return None

    # ------------------------------------------------------------ loads
    def _load(self, call: cst.Call) -> Load | None:
        if not call.args or call.args[0].star:
            return None
        owner = call.func.value  # type: ignore[attr-defined]
        if isinstance(owner, cst.Attribute) and owner.attr.value == "module" and code(owner.value) in self.sites:
            model, wrapped = code(owner.value), False
        elif is_simple_reference(owner) and code(owner) in self.sites:
            model = code(owner)
            wrapped = wrapped_when(self.rule, call, model, self.sites)
        else:
            return None
        key, path, aware = self._origin(call.args[0].value, 0)
        return Load(call, model, wrapped, key, path, aware or self._prefix_handled(call))

    def _origin(self, value: cst.BaseExpression, depth: int) -> tuple[str | None, str | None, bool]:
        """(entry, path, strips the prefix) of a state expression, following variables a little."""
        if isinstance(value, cst.DictComp):
            return None, None, strips_prefix(value)
        if isinstance(value, cst.Call) and PREFIX_HELPER.search(code(value.func)):
            return None, None, True
        if isinstance(value, cst.Call) and (helper := self.source.project.helper(value)) is not None and helper.strips_prefix:
            return None, None, True  # `fix_legacy_dict(torch.load(p))` of the project's modules drops `module.`
        if isinstance(value, cst.Subscript):
            key = _subscript_key(value)
            _, path, aware = self._origin(value.value, depth + 1) if depth < 4 else (None, None, False)
            return key, path, aware
        if isinstance(value, cst.Call) and self.rule.qualified(value) & names.TORCH_LOAD and value.args:
            return None, code(value.args[0].value), False
        if is_simple_reference(value) and depth < 4:
            for _, assigned in self.source.assignments.get(code(value), []):
                if assigned is not None and assigned is not value:
                    key, path, aware = self._origin(assigned, depth + 1)
                    if key is not None or path is not None or aware:
                        return key, path, aware
        return None, None, False

    def _prefix_handled(self, call: cst.Call) -> bool:
        """The load's function names the wrapper's prefix (``k.replace("module.", "")``) or calls
        a helper that strips it (``consume_prefix_in_state_dict_if_present``)."""
        scope = self.source.enclosing_function(call) or self.rule.file.module
        key = f"prefix-handled:{id(scope)}"
        memo = self.rule.file.memo
        if key not in memo:
            memo[key] = names_prefix(scope)
        return bool(memo[key])

    def _project_loader(self, call: cst.Call) -> bool:
        """A function of the project's own modules that loads state dicts into what it is handed,
        whatever its name (``restart_from_checkpoint(path, state_dict=model)``)."""
        helper = self.source.project.helper(call)
        return helper is not None and helper.loads_state

    def _helper_loads(self, call: cst.Call) -> list[Load]:
        """``load_checkpoint(path, encoder=encoder, ...)``: another module's helper loads into the
        wrapped models it is handed (the keys are the wrapper's, like the file's own saves)."""
        if self.rule.qualified(call) & names.TORCH_LOAD:
            return []
        helper = self.source.project.helper(call)
        if helper is not None and helper.loads_unprefixed:
            return self._unprefixed_loads(call)
        found: list[Load] = []
        for arg in call.args:
            if is_simple_reference(arg.value) and code(arg.value) in self.sites:
                model = code(arg.value)
                if wrapped_when(self.rule, call, model, self.sites):
                    found.append(Load(call, model, True, None, None, False, helper=True))
        return found

    def _unprefixed_loads(self, call: cst.Call) -> list[Load]:
        """A project helper that strips the prefix itself (``ckpt.load_weights(net, path)``),
        handed a wrapped model or the module a wrap takes: its loads match any layout."""
        inner = {wrap.model: wrap.target for wrap in ddp_wraps(self.rule, self.rule.file.module) if wrap.model is not None}
        found: list[Load] = []
        for arg in call.args:
            name = code(arg.value) if is_simple_reference(arg.value) else None
            model = name if name in self.sites else inner.get(name or "")
            if model is not None:
                found.append(Load(call, model, False, None, None, True, helper=True))
        return found


def _subscript_key(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return str(index.value.evaluated_value)
    return None


def _other_branches_exit(statements: list[cst.Assign], rule: Rule) -> bool:
    """The wraps sit in ``if`` branches, and every branch of the outermost such ``if`` that
    wraps nothing ends in a ``raise`` (or ``sys.exit()``): past it the model is always wrapped."""
    if not statements:
        return False
    wrapping = {id(s) for s in statements}
    outer: cst.If | None = None
    for statement in statements:
        top = None
        for ancestor in rule.ancestors(statement):
            if isinstance(ancestor, cst.If) and not is_main_guard(ancestor):
                top = ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Module)):
                break
        if top is None or (outer is not None and top is not outer):
            return False
        outer = top
    return outer is not None and _branches_covered(outer, wrapping)


def _branches_covered(node: cst.If, wrapping: set[int]) -> bool:
    branches: list[cst.BaseSuite] = [node.body]
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        branches.append(orelse.body)
        orelse = orelse.orelse
    if orelse is None:
        return False
    branches.append(orelse.body)
    return all(_block_covered(b, wrapping) for b in branches)


def _block_covered(block: cst.BaseSuite, wrapping: set[int]) -> bool:
    """The block wraps (a wrap statement, or an ``if`` all of whose branches wrap) or exits."""
    statements = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if id(small) in wrapping or isinstance(small, cst.Raise) or _is_exit(small):
                    return True
        elif isinstance(statement, cst.If) and _branches_covered(statement, wrapping):
            return True
    return False


def _is_exit(small: cst.BaseSmallStatement) -> bool:
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and code(small.value.func) in ("sys.exit", "exit", "quit")
