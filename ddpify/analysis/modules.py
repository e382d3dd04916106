"""What ``nn.Module`` code means: the calls that give back the same model (``model.to(d)``,
``DDP(model)``, ``model.module``), move, load or wrap it; which classes of the file are
modules, which submodules their ``__init__`` registers, and which of those their ``forward``
never reaches (DDP then waits for gradients those parameters never get, unless
``find_unused_parameters=True``)."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.callgraph import CallGraph, binding_site
from ddpify.analysis.source import Source
from ddpify.tree import cstutil

# DataParallel wraps too, in one process: the conversion replaces it, so it places nothing.
DATAPARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"})
DDP_WRAPS = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})
WRAPS = (
    DATAPARALLEL
    | DDP_WRAPS
    | {
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "ddpify.runtime.prepare_model",
    }
)
# Calls that give back the model they are given (wrapped, compiled or unwrapped).
SAME_MODEL = WRAPS | {
    "torch.compile",
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
    "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm",
    "ddpify.runtime.unwrap",
}
LOADS = frozenset({"ddpify.runtime.load_state_dict"})
MOVES = frozenset({"to", "cuda", "cpu"})
# nn.Module methods that return the module itself.
RETURNS_SELF = MOVES | {
    "train",
    "eval",
    "float",
    "half",
    "double",
    "bfloat16",
    "requires_grad_",
    "type",
    "share_memory",
    "apply",
    "to_empty",
}
# nn.Module / DDP members that mean the same on the DDP wrapper: calling any other attribute of
# a model (``model.encode``, ``model.encoder``) runs the inner module, around DDP's forward.
MODULE_API = frozenset(
    """add_module apply bfloat16 buffers children compile cpu cuda double eval float forward half
    load_state_dict modules named_buffers named_children named_modules named_parameters parameters
    register_backward_hook register_buffer register_forward_hook register_forward_pre_hook
    register_full_backward_hook register_full_backward_pre_hook register_module register_parameter
    requires_grad_ share_memory state_dict to to_empty train training type zero_grad no_sync
    module join register_comm_hook get_submodule get_parameter get_buffer""".split()
)
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Reaching submodules without naming them: nothing can be said about which ones are used.
_DYNAMIC = frozenset({"modules", "children", "named_children", "named_modules", "_modules", "__dict__"})


def is_module_class(graph: CallGraph, klass: cst.ClassDef, depth: int = 0) -> bool:
    """Whether ``klass`` derives from ``nn.Module`` (directly, through another ``torch.nn``
    module class such as ``nn.Sequential``, or through the file's classes)."""
    for base in klass.bases:
        for qualified in graph.source.qualified(base.value):
            parent = graph.definitions.get(qualified)
            if qualified in MODULE_BASES or _torch_module_class(qualified):
                return True
            if isinstance(parent, cst.ClassDef) and depth < 8 and is_module_class(graph, parent, depth + 1):
                return True
    return False


def _torch_module_class(qualified: str) -> bool:
    """``torch.nn.Sequential``, ``torch.nn.Linear``...: a class of ``torch.nn`` (not its
    functions, not ``Parameter``, not ``init``/``utils``)."""
    parts = qualified.split(".")
    return len(parts) == 3 and parts[:2] == ["torch", "nn"] and parts[2][:1].isupper() and not parts[2].startswith("Parameter")


def registers(graph: CallGraph, site: cst.CSTNode | None) -> bool:
    """``self.fc = nn.Linear(...)``, ``= nn.Parameter(...)``, ``= Block()`` (a module class of the
    file), ``= torchvision.models.resnet18()``, ``= deepcopy(model)`` (an EMA copy): the
    assignment registers new parameters (not ``nn.Sequential(self.fc1)``, which holds
    parameters registered already)."""
    value = site.value if isinstance(site, cst.Assign) else None
    if not isinstance(value, cst.Call):
        return False
    if "copy.deepcopy" in graph.source.qualified(value.func):
        return True  # `self.ema_model = deepcopy(model)`: a copy, with parameters of its own
    if any(isinstance(a.value, cst.Name) and a.value.value == "self" for a in cstutil.of_types(value, cst.Attribute)):
        return False  # nn.Sequential(self.fc1): the parameters of submodules registered already
    return constructs_module(graph, value)


def constructs_module(graph: CallGraph, call: cst.Call) -> bool:
    """``Block()`` (a module class of the file), ``nn.Linear(...)``, ``torchvision.models.resnet18()``
    (or ``nn.Parameter(...)``): the call builds new parameters (not ``nn.CrossEntropyLoss()``,
    ``nn.ReLU()``: ``parameterless``)."""
    klass = graph.class_called(call)
    if klass is not None:
        return is_module_class(graph, klass)
    return any(
        (q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and ".functional." not in q and not parameterless(q))
        or q.startswith("torchvision.models.")
        for q in graph.source.qualified(call.func)
    )


# torch.nn modules that hold no parameters: running one outside DDP's forward averages nothing away
_PARAMETERLESS = frozenset(
    {
        *"ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softmax LogSoftmax Softplus Softsign".split(),
        *"Hardtanh Hardswish Hardsigmoid Tanhshrink Threshold Dropout Dropout1d Dropout2d Dropout3d AlphaDropout".split(),
        *"Identity Flatten Unflatten MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d".split(),
        *"AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d Upsample".split(),
        *"PixelShuffle PixelUnshuffle ZeroPad2d".split(),
    }
)


def parameterless(qualified: str) -> bool:
    """``torch.nn.CrossEntropyLoss`` (every loss but the adaptive softmax), activations,
    dropout, pooling, reshaping: classes whose instances own no parameters."""
    name = qualified.rsplit(".", 1)[-1]
    if not qualified.startswith("torch.nn."):
        return False
    return name in _PARAMETERLESS or (name.endswith("Loss") and name != "AdaptiveLogSoftmaxWithLoss")


def unused_submodules(graph: CallGraph, klass: cst.ClassDef, root: str = "forward") -> tuple[str, ...]:
    """Submodules ``klass.__init__`` registers that neither ``forward`` (or the method ``root``)
    nor the methods it calls read (a read in ``__init__`` itself, ``nn.Sequential(self.a)``,
    counts as a use; so does a read in a method of a base class of this file they call). Empty
    when that method or ``__init__`` is not the class's own, or when it reaches its submodules
    dynamically (``self.children()``, ``getattr(self, ...)``)."""
    return _submodule_uses(graph, klass, root)[0]


def indexed_submodules(graph: CallGraph, klass: cst.ClassDef, root: str = "forward", depth: int = 0) -> tuple[str, ...]:
    """Module lists ``klass.__init__`` registers that ``forward`` (and what it calls) reads at an
    index or slice computed at run time on some path (a progressive GAN's ``self.from_rgb[self.depth
    - depth]``, ``self.blocks[start:]``): such a step runs some of their modules, and the others'
    parameters get no gradient in it. (A forward that also runs them all on another path, or
    reads one more at a run-time index, costs ``find_unused_parameters`` its graph walk only.)
    Submodules built from classes of this file count too, a few levels down
    (``self.g_synthesis.blocks`` of StyleGAN's Generator)."""
    found = _submodule_uses(graph, klass, root)[1]
    if found or depth >= _NESTING:
        return found
    for attribute, (stores, _) in graph.attributes(klass).items():
        for store, _method in stores:
            site = binding_site(graph.source, store)
            value = site.value if isinstance(site, (cst.Assign, cst.AnnAssign)) else None
            inner = graph.class_called(value) if isinstance(value, cst.Call) else None
            if inner is not None and inner is not klass and is_module_class(graph, inner):
                nested = indexed_submodules(graph, inner, depth=depth + 1)
                if nested:
                    return tuple(f"{attribute}.{name}" for name in nested)
    return ()


_NESTING = 3  # how many levels of submodule classes indexed_submodules reads


def _submodule_uses(graph: CallGraph, klass: cst.ClassDef, root: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(unused, read only at run-time indexes): see ``unused_submodules``, ``indexed_submodules``."""
    source = graph.source
    own = {s.name.value: s for s in klass.body.body if isinstance(s, cst.FunctionDef)}
    init, forward = own.get("__init__"), own.get(root)
    if init is None or forward is None:
        return (), ()
    reached, pending = {forward}, [forward]
    while pending:
        method = pending.pop()
        for call in graph.own(method, cst.Call):
            func = call.func  # type: ignore[attr-defined]
            if isinstance(func, cst.Name) and func.value in ("getattr", "vars"):
                return (), ()
            for callee, implicit in graph.callees(call):  # type: ignore[arg-type]
                if implicit and callee not in reached:  # its own or inherited (glow's LayerList.forward_)
                    reached.add(callee)
                    pending.append(callee)
    inherited = {read for m in reached if source.enclosing_class(m) is not klass for read in _self_reads(graph, m)}
    unused: list[str] = []
    indexed: list[str] = []
    for attribute, (stores, reads) in graph.attributes(klass).items():
        if attribute in _DYNAMIC and any(m in reached for _, m in reads):
            return (), ()
        sites = [binding_site(source, s) for s, m in stores if m is init]
        if not any(registers(graph, site) for site in sites):
            continue
        used = [node for node, m in reads if m in reached]
        if not used and attribute not in inherited and not any(m is init for _, m in reads):
            unused.append(attribute)
        elif any(_at_run_time_index(source, node) for node in used) and any(_module_list(graph, site) for site in sites):
            indexed.append(attribute)
    return tuple(unused), tuple(indexed)


def _self_reads(graph: CallGraph, method: cst.FunctionDef) -> set[str]:
    """The attributes a method reads off its ``self`` (``self.layers``)."""
    params = [*method.params.posonly_params, *method.params.params]
    own = params[0].name.value if params else None
    return {
        node.attr.value
        for node in graph.own(method, cst.Attribute)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == own
    }


def _module_list(graph: CallGraph, site: cst.CSTNode | None) -> bool:
    """``self.blocks = nn.ModuleList(...)`` (or a ModuleDict)."""
    value = site.value if isinstance(site, (cst.Assign, cst.AnnAssign)) else None
    return isinstance(value, cst.Call) and any(q.endswith(("ModuleList", "ModuleDict")) for q in graph.source.qualified(value))


def _at_run_time_index(source: Source, node: cst.CSTNode) -> bool:
    """``self.blocks[i]`` / ``self.blocks[a:b]`` with an index that is not a literal."""
    parent = source.parent(node)
    if not isinstance(parent, cst.Subscript) or parent.value is not node:
        return False
    return any(not (isinstance(e.slice, cst.Index) and _literal(e.slice.value)) for e in parent.slice)


def _literal(node: cst.BaseExpression) -> bool:
    """``0``, ``-1``, ``"key"``."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.SimpleString))


def model_outer(source: Source, node: cst.CSTNode) -> cst.BaseExpression | None:
    """``model.to(d)``, ``model.module``, ``DDP(model)``, ``torch.compile(model)``: the model still."""
    parent = source.parent(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        if parent.attr.value == "module":
            return parent
        call = source.parent(parent)
        if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in RETURNS_SELF:
            return call
    if isinstance(parent, cst.Arg) and parent.value is node and (parent.keyword is None or parent.keyword.value == "module"):
        call = source.parent(parent)
        if isinstance(call, cst.Call) and call.args[0] is parent and source.qualified(call.func) & SAME_MODEL:
            return call
    return None


def model_inner(source: Source, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The model inside ``model.to(d)``, ``DDP(model)``, ``model.module``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "module":
        return node.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in RETURNS_SELF:
        return node.func.value
    if isinstance(node, cst.Call) and node.args and source.qualified(node.func) & SAME_MODEL:
        return node.args[0].value
    return None


def unwrapped(source: Source, node: cst.CSTNode) -> bool:
    """``model.module`` / ``ddpify.unwrap(model)``: the module inside the DDP wrapper."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "module"
    return isinstance(node, cst.Call) and "ddpify.runtime.unwrap" in source.qualified(node.func)


def registered_submodules(graph: CallGraph, klass: cst.ClassDef) -> tuple[str, ...] | None:
    """The submodules and parameters ``klass.__init__`` registers by name (``self.conv1 =
    nn.Conv2d(...)``); None when that is not all of its parameters: a base class other than
    ``nn.Module``, or registration without a name in sight (``add_module``, ``setattr``,
    ``register_parameter``)."""
    source = graph.source
    if not klass.bases or not all(source.qualified(b.value) & MODULE_BASES for b in klass.bases):
        return None
    init = next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return None
    for call in graph.own(init, cst.Call):
        name = cstutil.attribute_name(call.func) if isinstance(call.func, cst.Attribute) else None  # type: ignore[attr-defined]
        if name in _UNNAMED or (isinstance(call.func, cst.Name) and call.func.value == "setattr"):  # type: ignore[attr-defined]
            return None
    found = [
        a
        for a, (stores, _) in graph.attributes(klass).items()
        if any(registers(graph, binding_site(source, s)) for s, m in stores if m is init)
    ]
    return tuple(found)


_UNNAMED = frozenset({"add_module", "register_module", "register_parameter"})


def project_registered_submodules(graph: CallGraph) -> dict[str, tuple[str, ...]]:
    """For a project module's summary: ``Class.__init__`` of each module class whose registered
    submodules are all known (``registered_submodules``)."""
    found: dict[str, tuple[str, ...]] = {}
    for klass in graph.source.of_types(cst.ClassDef):
        if graph.source.enclosing_function(klass) is None and (registered := registered_submodules(graph, klass)) is not None:
            found[f"{klass.name.value}.__init__"] = registered
    return found


def project_unused_submodules(graph: CallGraph, functions: list[cst.FunctionDef]) -> dict[str, tuple[str, ...]]:
    """For a project module's summary: ``Class.__init__`` of each module class with submodules
    its ``forward`` never uses, and each of ``functions`` that returns such an instance
    (``return GaussianDiffusion(...)``, or a variable assigned one), also of a class of a
    module it imports (that module's summary)."""
    source = graph.source
    found: dict[str, tuple[str, ...]] = {}
    for klass in source.of_types(cst.ClassDef):
        if source.enclosing_function(klass) is None and is_module_class(graph, klass):
            unused = unused_submodules(graph, klass)
            if unused:
                found[f"{klass.name.value}.__init__"] = unused
    for function in functions:
        made = {_unused_made(graph, value, found) for value in _returned_values(source, function)}
        if len(made) == 1 and (unused := made.pop()):
            found[function.name.value] = unused
    return found


def _returned_values(source: Source, function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What ``function`` returns, through a plain variable of its own assigned once."""
    values: list[cst.BaseExpression] = []
    for returned in source.of_types_in(function, cst.Return):
        value = returned.value
        if isinstance(value, cst.Name):
            bound = [v for statement, v in source.assignments.get(value.value, []) if source.enclosing_function(statement) is function]
            value = bound[0] if len(bound) == 1 else None
        if value is not None:
            values.append(value)
    return values


def _unused_made(graph: CallGraph, value: cst.BaseExpression, own: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    if not isinstance(value, cst.Call):
        return ()
    klass = graph.class_called(value)
    if klass is not None:
        return own.get(f"{klass.name.value}.__init__", ())
    helper = graph.source.project_call(value)
    return helper.unused_submodules if helper is not None else ()


# methods that read a module's members by their names: through a DDP wrapper each name starts with "module."
NAMED_READS = frozenset({"named_parameters", "named_buffers", "named_modules", "named_children", "state_dict"})


def name_readers(source: Source, functions: list[cst.FunctionDef]) -> dict[cst.FunctionDef, tuple[int, ...]]:
    """For each of ``functions`` that reads what a parameter holds by name (``for name, p in
    module.named_parameters():``, ``module.state_dict()``) and neither calls that parameter nor
    hands it to other code (``isinstance(module, nn.DataParallel)`` only looks at it):
    the argument positions of those parameters (``self`` not counted). An EMA helper's
    ``register(model)`` keyed by those names must get the plain module: through a DDP wrapper
    every name starts with ``module.``, and what it saves no longer loads into the model."""
    found: dict[cst.FunctionDef, tuple[int, ...]] = {}
    for function in functions:
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        if positional and positional[0] in ("self", "cls") and source.is_method(function):
            positional = positional[1:]
        calls = [c for c in source.of_types_in(function.body, cst.Call) if isinstance(c, cst.Call)]
        called = {c.func.value for c in calls if isinstance(c.func, cst.Name)}
        called |= {a.value.value for c in calls if not _inspects(c) for a in c.args if isinstance(a.value, cst.Name)}  # handed on
        read = {c.func.value.value for c in calls if cstutil.is_method_call(c, *NAMED_READS) and isinstance(c.func.value, cst.Name)}  # type: ignore[attr-defined]
        positions = tuple(i for i, name in enumerate(positional) if name in read and name not in called)
        if positions:
            found[function] = positions
    return found


_INSPECTIONS = frozenset({"isinstance", "hasattr", "getattr", "type", "id"})


def _inspects(call: cst.Call) -> bool:
    """``isinstance(module, nn.DataParallel)``: a look at the object, not a use of it."""
    return isinstance(call.func, cst.Name) and call.func.value in _INSPECTIONS
