"""Shared questions of the data, rank, checkpoint, device and logging rules (DDP003, DDP006-011,
DDP013, DDP016, DDP017): which calls are DDP wraps and where, is a test about the *local* rank,
is a call singleton I/O, is the script CPU-only, does it pin each rank to its own GPU.

Everything here is a pure function of the module and the rule's metadata, so rules can call it
from ``visit_Module`` once and cache the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst
from libcst.metadata import PositionProvider

from ddpify.check.helpers import call_assignments, is_ddp_wrap
from ddpify.check.rule import Rule
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_method_call, is_name, is_simple_reference, of_types

# ---------------------------------------------------------------- names
DDP_CLASSES = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})
SAVE_FUNCTIONS = frozenset({"torch.save", "ddpify.runtime.save"})
SET_DEVICE = frozenset(
    {
        "torch.cuda.set_device",
        "torch.cuda.device",  # `with torch.cuda.device(local_rank):`
        "torch.accelerator.set_device_index",
        "torch.accelerator.set_device_idx",
    }
)
INIT_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
# A helper of the project that sets the group and device up in another file (detr/timm style).
EXTERNAL_DEVICE_SETUP = re.compile(
    r"^(init_distributed\w*|setup_distributed\w*|init_dist|setup_ddp|ddp_setup|init_ddp|setup_for_distributed)$"
)
BATCHNORM = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?(Lazy)?BatchNorm[123]d$")
SYNC_BATCHNORM = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?SyncBatchNorm(\.convert_sync_batchnorm)?$")
TORCHVISION_MODEL = re.compile(r"^torchvision\.models\.(segmentation\.|video\.)?([a-z][a-z0-9_]*)$")
# torchvision constructors whose models have no BatchNorm (LayerNorm or no normalisation).
TORCHVISION_WITHOUT_BN = re.compile(
    r"^(alexnet|vgg\d+|squeezenet\w*|vit_\w+|swin_\w+|swin3d_\w+|convnext_\w+|mvit_\w+|get_model\w*|get_weight\w*|list_models)$"
)
IO_METHODS = frozenset(
    {
        "save_pretrained",
        "save_checkpoint",
        "save_model",
        "save_state",
        "add_scalar",
        "add_scalars",
        "add_image",
        "add_images",
        "add_histogram",
        "add_text",
        "add_figure",
    }
)


def short(node: cst.CSTNode, limit: int = 60) -> str:
    """The node's source on one line, shortened for a message."""
    text = " ".join(code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def name_values(module: cst.Module) -> dict[str, list[cst.BaseExpression]]:
    """Every value assigned to each plain name anywhere in the module."""
    values: dict[str, list[cst.BaseExpression]] = {}
    for assign in of_types(module, cst.Assign):
        assert isinstance(assign, cst.Assign)
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                values.setdefault(target.target.value, []).append(assign.value)
    return values


# ---------------------------------------------------------------- I/O
def singleton_io(rule: Rule, call: cst.Call) -> str | None:
    """What a call writes once per job (a checkpoint, a log, a line of output), or None."""
    qualified = rule.qualified(call)
    if is_save_call(rule, call):
        return f"{short(call.func)}(...)"
    if qualified & names.SUMMARY_WRITERS:
        return "SummaryWriter"
    if any(q.startswith(names.WANDB_PREFIX) for q in qualified):
        return "wandb"
    if any(q.startswith("mlflow.") for q in qualified):
        return "mlflow"
    if qualified & names.PRINT:
        return "print"
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in IO_METHODS:
        return call.func.attr.value
    return None


_SAVE_NAME = re.compile(r"^_*(save(_\w+)?|\w+_save)$")


def is_save_call(rule: Rule, call: cst.Call) -> bool:
    """``torch.save``, ``ddpify.save``, any ``<obj>.save(...)`` (accelerator, fabric, xm), or a
    project helper named like one (``save_checkpoint(state, is_best)``, ``self._save_model(...)``)."""
    if rule.qualified(call) & SAVE_FUNCTIONS:
        return True
    func = call.func
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return bool(_SAVE_NAME.match(last))


def root_name(node: cst.CSTNode) -> str | None:
    """``ckpt`` for ``ckpt``, ``ckpt["model"]``, ``state.ckpt``."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


# ---------------------------------------------------------------- DDP wraps
def is_ddp_class_call(rule: Rule, call: cst.Call) -> bool:
    """A literal ``DistributedDataParallel(...)`` (not ``ddpify.prepare_model``, which converts
    BatchNorm itself)."""
    return bool(rule.qualified(call) & DDP_CLASSES)


def wrap_sites(rule: Rule, module: cst.Module) -> dict[str, list[cst.Assign]]:
    """``name -> [assignments of a DDP wrap to it]`` (``model = DDP(model)``, ``prepare_model``)."""
    sites: dict[str, list[cst.Assign]] = {}
    for assign in call_assignments(module):
        if len(assign.targets) == 1 and is_ddp_wrap(rule, assign.value):  # type: ignore[arg-type]
            target = assign.targets[0].target
            if is_simple_reference(target):
                sites.setdefault(code(target), []).append(assign)
    return sites


def enclosing_function(rule: Rule, node: cst.CSTNode) -> cst.FunctionDef | None:
    for ancestor in rule.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
    return None


def line_of(rule: Rule, node: cst.CSTNode) -> int:
    return rule.get_metadata(PositionProvider, node).start.line


def wrapped_when(rule: Rule, node: cst.CSTNode, name: str, sites: dict[str, list[cst.Assign]]) -> bool:
    """Whether ``name`` may hold the wrapped model where ``node`` runs: some wrap of ``name``
    comes before it, or lives in another function (order unknown). A use that precedes every
    wrap in its own function sees the plain model."""
    wraps = sites.get(name, [])
    if not wraps:
        return False
    function = enclosing_function(rule, node)
    line = line_of(rule, node)
    for wrap in wraps:
        wrap_function = enclosing_function(rule, wrap)
        if wrap_function is function:
            if line_of(rule, wrap) < line:
                return True
        elif not _called_before(rule, function, wrap_function, line_of(rule, wrap)):
            return True
    return False


def _called_before(rule: Rule, callee: cst.FunctionDef | None, caller: cst.FunctionDef | None, line: int) -> bool:
    """Whether ``caller`` calls ``callee`` (``self._load(...)`` / ``load(...)``) before ``line``:
    then ``callee`` runs before the wrap there (``__init__`` loading a snapshot, then wrapping)."""
    if callee is None or caller is None:
        return False
    target = callee.name.value
    return any(_is_call_of(call, target) and line_of(rule, call) < line for call in of_types(caller, cst.Call))


def _is_call_of(node: cst.CSTNode, function: str) -> bool:
    """``function(...)`` or ``self.function(...)``: a call of a module function or a method."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute):
        return is_name(node.func.value, "self") and node.func.attr.value == function
    return is_name(node.func, function)


def wrapped_state_dict_saves(rule: Rule, module: cst.Module, sites: dict[str, list[cst.Assign]]) -> list[cst.Call]:
    """``W.state_dict()`` calls on a wrapped ``W`` whose result reaches a save: directly
    (``torch.save(model.state_dict(), p)``), or through a variable or dict the save receives
    (``ckpt = {"model": model.state_dict()}; torch.save(ckpt, p)``)."""
    saved_names: set[str] = set()
    for call in of_types(module, cst.Call):
        assert isinstance(call, cst.Call)
        if is_save_call(rule, call):
            for arg in call.args:
                saved_names.update(n.value for n in of_types(arg.value, cst.Name))  # type: ignore[attr-defined]
    found: list[cst.Call] = []
    for call in of_types(module, cst.Call):
        if not is_method_call(call, "state_dict"):
            continue
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        receiver = code(call.func.value)
        if receiver not in sites or not wrapped_when(rule, call, receiver, sites):
            continue
        if _reaches_save(rule, call, saved_names):
            found.append(call)
    return found


def _reaches_save(rule: Rule, call: cst.Call, saved_names: set[str]) -> bool:
    for ancestor in rule.ancestors(call):
        if isinstance(ancestor, cst.Call) and is_save_call(rule, ancestor):
            return True
        if isinstance(ancestor, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets: list[cst.CSTNode]
            if isinstance(ancestor, cst.Assign):
                targets = [t.target for t in ancestor.targets]
            else:
                targets = [ancestor.target]
            return any(root_name(t) in saved_names for t in targets)
        if isinstance(ancestor, (cst.BaseStatement, cst.Lambda)):
            return False
    return False


# ---------------------------------------------------------------- scope
DATA_PARALLEL_NAMES = (
    DDP_CLASSES | INIT_PROCESS_GROUP | frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
)


def is_data_parallel(rule: Rule, module: cst.Module) -> bool:
    """Whether the script trains data-parallel: it names DistributedDataParallel, FSDP,
    ``init_process_group``, a DistributedSampler or ddpify.runtime. Scripts that only use
    ``torch.distributed.rpc`` (parameter servers) or tensor parallelism are not DDP scripts."""
    for node in of_types(module, cst.Name, cst.Attribute):
        for name in rule.qualified(node):
            if name in DATA_PARALLEL_NAMES or name.startswith(("torch.distributed.fsdp", "ddpify.runtime")):
                return True
    return False


# ---------------------------------------------------------------- devices
def pins_device_per_rank(rule: Rule, module: cst.Module) -> bool:
    """Whether the script gives each rank its own GPU: ``torch.cuda.set_device``, a
    ``torch.cuda.device`` context, ``CUDA_VISIBLE_DEVICES`` set in code, or a project helper
    that sets distributed training up elsewhere (``utils.init_distributed_mode(args)``)."""
    for call in of_types(module, cst.Call):
        assert isinstance(call, cst.Call)
        if rule.qualified(call) & SET_DEVICE:
            return True
        func = call.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if EXTERNAL_DEVICE_SETUP.match(last):
            return True
        if last in {"setdefault", "putenv", "update"} and any(_mentions_visible_devices(a.value) for a in call.args):
            return True  # os.environ.setdefault("CUDA_VISIBLE_DEVICES", ...), os.putenv(...)
    for assign in of_types(module, cst.Assign):
        assert isinstance(assign, cst.Assign)
        if any(isinstance(t.target, cst.Subscript) and _mentions_visible_devices(t.target) for t in assign.targets):
            return True
    return False


def _mentions_visible_devices(node: cst.CSTNode) -> bool:
    return any(
        "CUDA_VISIBLE_DEVICES" in str(s.evaluated_value)  # type: ignore[attr-defined]
        for s in of_types(node, cst.SimpleString)
    ) or (isinstance(node, cst.SimpleString) and "CUDA_VISIBLE_DEVICES" in str(node.evaluated_value))


_ACCELERATOR_TEXT = re.compile(r"cuda|nccl|gpu|device_ids|accelerator|mps|xpu", re.I)


def cpu_only(source: str) -> bool:
    """A script that never mentions a GPU (no cuda, nccl, gpu, device_ids, accelerator)."""
    return not _ACCELERATOR_TEXT.search(source)


def gloo_backend(rule: Rule, module: cst.Module) -> cst.Call | None:
    """The ``init_process_group("gloo")`` / ``init_process_group(backend="gloo")`` call, if any."""
    for call in of_types(module, cst.Call):
        assert isinstance(call, cst.Call)
        if not rule.qualified(call) & INIT_PROCESS_GROUP:
            continue
        for index, arg in enumerate(call.args):
            positional_backend = arg.keyword is None and index == 0 and not arg.star
            if positional_backend or (arg.keyword is not None and arg.keyword.value == "backend"):
                if isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "gloo":
                    return call
    return None


# ---------------------------------------------------------------- datasets
ITERABLE_PREFIXES = ("webdataset.", "torchdata.datapipes.iter.", "torchdata.nodes.")


def iterable_dataset_classes(rule: Rule, module: cst.Module) -> set[str]:
    """Classes of this module that derive (directly or through one another) from IterableDataset."""
    classes = [c for c in of_types(module, cst.ClassDef) if isinstance(c, cst.ClassDef)]
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for klass in classes:
            if klass.name.value in found:
                continue
            for base in klass.bases:
                if rule.qualified(base.value) & names.ITERABLE_DATASET or code(base.value) in found:
                    found.add(klass.name.value)
                    changed = True
                    break
    return found


def is_iterable_dataset(rule: Rule, dataset: cst.BaseExpression, classes: set[str], values: dict[str, list[cst.BaseExpression]]) -> bool:
    """A dataset built by an IterableDataset class (directly or through one variable)."""
    candidates: Iterable[cst.BaseExpression] = [dataset]
    if isinstance(dataset, cst.Name):
        candidates = [dataset, *values.get(dataset.value, [])]
    for candidate in candidates:
        if not isinstance(candidate, cst.Call):
            continue
        if code(candidate.func) in classes:
            return True
        qualified = rule.qualified(candidate)
        if qualified & names.ITERABLE_DATASET or any(q.startswith(ITERABLE_PREFIXES) for q in qualified):
            return True
    return False
