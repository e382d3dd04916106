"""Questions about the whole script: does it train data-parallel, pin each rank to its own
GPU, run on CPU only or with gloo, create a process group, combine anything across processes;
which of its datasets are iterable; the BatchNorm and torchvision names the SyncBN rules use.

Each is a pure function of the module and the rule's metadata, so rules call it from
``visit_Module`` once and keep the answer."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from ddpify.analysis.collectives import REDUCTION_HELPER, REDUCTIONS
from ddpify.analysis.distributed_code import SET_DEVICE
from ddpify.check.calls import dist_function, every_call, nodes, runtime_function
from ddpify.check.rule import Rule
from ddpify.check.wraps import DDP_CLASSES
from ddpify.convert import names
from ddpify.tree.cstutil import callee_name, code, of_types

INIT_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})

# A helper of the project that sets the group and device up in another file (detr/timm style).
EXTERNAL_DEVICE_SETUP = re.compile(
    r"^(init_distributed\w*|setup_distributed\w*|init_dist|setup_ddp|ddp_setup|init_ddp|setup_for_distributed)$"
)
# ... or a generic `init()` of a module named for distributed training (EDM's
# `torch_utils.distributed.init()`, `dist_utils.setup()`): it calls set_device(LOCAL_RANK).
EXTERNAL_SETUP_CALL = re.compile(r"^(init|setup|initialize|init_\w+|setup_\w+)$")
DISTRIBUTED_MODULE = re.compile(r"dist|ddp", re.I)

BATCHNORM = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?(Lazy)?BatchNorm[123]d$")

SYNC_BATCHNORM = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?SyncBatchNorm(\.convert_sync_batchnorm)?$")

TORCHVISION_MODEL = re.compile(r"^torchvision\.models\.(segmentation\.|video\.)?([a-z][a-z0-9_]*)$")

# torchvision constructors whose models have no BatchNorm (LayerNorm or no normalisation).
TORCHVISION_WITHOUT_BN = re.compile(
    r"^(alexnet|vgg\d+|squeezenet\w*|vit_\w+|swin_\w+|swin3d_\w+|convnext_\w+|mvit_\w+|get_model\w*|get_weight\w*|list_models)$"
)

DATA_PARALLEL_NAMES = (
    DDP_CLASSES | INIT_PROCESS_GROUP | frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
)


def is_data_parallel(rule: Rule, module: cst.Module) -> bool:
    """Whether the script trains data-parallel: it names DistributedDataParallel, FSDP,
    ``init_process_group``, a DistributedSampler or ddpify.runtime, or calls a project helper
    that joins the process group or wraps a model in DDP. Scripts that only use
    ``torch.distributed.rpc`` (parameter servers) or tensor parallelism are not DDP scripts."""
    for node in of_types(module, cst.Name, cst.Attribute):
        for name in rule.qualified(node):
            if name in DATA_PARALLEL_NAMES or name.startswith(("torch.distributed.fsdp", "ddpify.runtime")):
                return True
    source = rule.file.analysis.source
    for call in source.of_types(cst.Call):  # rq-vae's `dist_utils.dataparallel_and_sync(distenv, model)`
        helper = source.project_call(call)
        if helper is not None and (helper.joins_group or helper.wraps_ddp):
            return True
    return False


def pins_device_per_rank(rule: Rule, module: cst.Module) -> bool:
    """Whether the script gives each rank its own GPU: ``torch.cuda.set_device``, a
    ``torch.cuda.device`` context, ``CUDA_VISIBLE_DEVICES`` set in code, a project helper that
    calls ``set_device`` (read from its module: ``Helper.sets_device``), or one named for
    setting distributed training up elsewhere (``utils.init_distributed_mode(args)``)."""
    for call in of_types(module, cst.Call):
        assert isinstance(call, cst.Call)
        if rule.qualified(call) & SET_DEVICE:
            return True
        helper = rule.file.analysis.source.project_call(call)
        if helper is not None and helper.sets_device:  # initialize_environment_ddp() -> setup_ddp() -> set_device
            return True
        func = call.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if EXTERNAL_DEVICE_SETUP.match(last) or _distributed_module_setup(rule, call, last):
            return True
        if last in {"setdefault", "putenv", "update"} and any(_mentions_visible_devices(a.value) for a in call.args):
            return True  # os.environ.setdefault("CUDA_VISIBLE_DEVICES", ...), os.putenv(...)
    for assign in of_types(module, cst.Assign):
        assert isinstance(assign, cst.Assign)
        if any(isinstance(t.target, cst.Subscript) and _mentions_visible_devices(t.target) for t in assign.targets):
            return True
    return False


def _distributed_module_setup(rule: Rule, call: cst.Call, last: str) -> bool:
    """``torch_utils.distributed.init()``: a setup function of a project module named for
    distributed training (not torch's own ``init_process_group``, which sets no device)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not EXTERNAL_SETUP_CALL.match(last):
        return False
    if any(q.startswith("torch.") for q in rule.qualified(call)):
        return False
    return bool(DISTRIBUTED_MODULE.search(code(func.value)))


def _mentions_visible_devices(node: cst.CSTNode) -> bool:
    return any("CUDA_VISIBLE_DEVICES" in str(s.evaluated_value) for s in of_types(node, cst.SimpleString)) or (
        isinstance(node, cst.SimpleString) and "CUDA_VISIBLE_DEVICES" in str(node.evaluated_value)
    )


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


def has_reduction(rule: Rule, module: cst.Module) -> bool:
    """Does the script combine anything across processes (or use a library that does)?"""
    for call in every_call(module):
        if dist_function(rule, call) in REDUCTIONS:
            return True
        name = callee_name(call)
        if name is not None and REDUCTION_HELPER.search(name):
            return True
    return imports_any(module, ("torchmetrics", "accelerate", "lightning", "pytorch_lightning", "ignite"))


def imports_any(module: cst.Module, packages: tuple[str, ...]) -> bool:
    for node in [*nodes(module, cst.Import), *nodes(module, cst.ImportFrom)]:
        if isinstance(node, cst.Import):
            dotted = [code(alias.name) for alias in node.names]
        elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            dotted = [code(node.module)]
        else:
            continue
        if any(d.split(".")[0] in packages for d in dotted):
            return True
    return False


# Calls that create the default process group (torch, DeepSpeed, device meshes, the usual
# helpers around them, Accelerate/Fabric objects that do it for you).
PROCESS_GROUP_INIT = re.compile(
    r"^(init_process_group|init_distributed\w*|init_dist\w*|dist_init\w*|distributed_init\w*|init_device_mesh|"
    r"setup|\w+_setup|setup_\w+|init_ddp|initialize_distributed|Accelerator|Fabric)$"
)


def uses_runtime_setup(rule: Rule, module: cst.Module) -> bool:
    """``ddpify.setup()`` / ``with ddpify.distributed():`` (which also tear the group down)."""
    return any(runtime_function(rule, call) in ("setup", "distributed") for call in every_call(module))


def initialises_process_group(rule: Rule, module: cst.Module) -> bool:
    for call in every_call(module):
        name = callee_name(call)
        if name is not None and PROCESS_GROUP_INIT.match(name):
            return True
    return uses_runtime_setup(rule, module)


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


# Hugging Face ``datasets``' per-node split: what it returns is this rank's part already.
_SPLIT_BY_NODE = frozenset({"datasets.distributed.split_dataset_by_node"})


def is_iterable_dataset(
    rule: Rule, dataset: cst.BaseExpression, classes: set[str], values: dict[str, list[cst.BaseExpression]], depth: int = 0
) -> bool:
    """A dataset built by an IterableDataset class (directly or through one variable), or one
    sharded upstream: ``split_dataset_by_node(...)``, or a dataset built around one
    (``Tokenized(split_dataset_by_node(raw, rank, world_size))``, one level)."""
    candidates: Iterable[cst.BaseExpression] = [dataset]
    if isinstance(dataset, cst.Name):
        candidates = [dataset, *values.get(dataset.value, [])]
    for candidate in candidates:
        if not isinstance(candidate, cst.Call):
            continue
        if code(candidate.func) in classes:
            return True
        qualified = rule.qualified(candidate)
        if qualified & (names.ITERABLE_DATASET | _SPLIT_BY_NODE) or any(q.startswith(ITERABLE_PREFIXES) for q in qualified):
            return True
        if depth == 0 and any(
            is_iterable_dataset(rule, a.value, set(), values, 1) for a in candidate.args if _splits(rule, a.value, values)
        ):
            return True
    return False


def _splits(rule: Rule, value: cst.BaseExpression, values: dict[str, list[cst.BaseExpression]]) -> bool:
    """``value`` is (a variable holding) a ``split_dataset_by_node(...)`` result."""
    found = [value, *values.get(value.value, [])] if isinstance(value, cst.Name) else [value]
    return any(isinstance(v, cst.Call) and rule.qualified(v) & _SPLIT_BY_NODE for v in found)
