"""Which files the DDP rules apply to.

A file is a *distributed script* when it imports ``torch.distributed`` (any submodule or
alias), ``DistributedDataParallel``, ``DistributedSampler`` (from any module that offers it) or
``ddpify.runtime``, or reaches one of them through an attribute of a plain import
(``torch.distributed.barrier()``, ``torch.nn.parallel.DistributedDataParallel(model)``,
``nn.parallel.DistributedDataParallel``, ``torch.utils.data.DistributedSampler``), or calls a
function or builds a class of its own project that joins or uses the process group, tests the
rank or starts the workers (``init_dist(args.launcher)``, ``get_dist_info()``: many DDP projects
keep all of ``torch.distributed`` in a helper module; ``ddpify.analysis.distributed_code``). A
plain single-GPU script is not checked (``--require-ddp`` turns that into finding DDP000),
because every DDP rule would be noise there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ddpify.analysis import project_files
from ddpify.findings import Finding

if TYPE_CHECKING:
    import libcst as cst

    from ddpify.check.file_info import FileInfo

NOT_DISTRIBUTED = "DDP000"
_DISTRIBUTED_MODULES = ("torch.distributed", "torch.nn.parallel.distributed", "ddpify.runtime", "ddpify")
_DISTRIBUTED_NAMES = frozenset({"DistributedDataParallel", "DistributedSampler"})


def mentions_distributed(source: str, path: str | None = None) -> bool:
    """Cheap text pre-filter: no parse for files that cannot be distributed scripts (and no
    libcst import: this module imports it only to look at a tree). The project modules the
    file at ``path`` imports count too: its process group may be set up there."""
    if _mentions(source):
        return True
    if path is None or not Path(path).is_file():
        return False
    return any(_mentions(text) for _, text in project_files.imported_sources(source, Path(path))) or imported_by_ddp(path)


# What a distributed script's text names (``DistributedDataParallel``, ``init_process_group``, ...).
_DDP_TEXT = re.compile(r"DistributedDataParallel|init_process_group|DistributedSampler|torch\.distributed")


def imported_by_ddp(path: str) -> bool:
    """A project file that imports ``path`` (directly or through up to two more) is a
    distributed script: this module's code (a trainer class, a training step, a checkpoint
    helper) runs in every rank's process, so the rules apply to it too (TorchSSL's
    ``models/fixmatch/fixmatch.py``, trained by ``fixmatch.py`` under ``mp.spawn``)."""
    return any(_DDP_TEXT.search(text) for _, text in project_files.importers_upto(Path(path), 3))


def _mentions(text: str) -> bool:
    return "istributed" in text or "ddpify" in text


def not_distributed(path: str, require_ddp: bool) -> list[Finding]:
    """The findings of a file that is not a distributed script: DDP000 with --require-ddp."""
    if not require_ddp:
        return []
    return [Finding(path, 1, 1, NOT_DISTRIBUTED, "not a distributed script: convert it with `ddpify FILE -o OUT`")]


def is_distributed_file(file: FileInfo) -> bool:
    """The rules apply: a distributed script by its own imports, or through its project's helpers
    (asked only when the imports do not tell, as that reads the imported project modules)."""
    from ddpify.analysis.distributed_code import calls_distributed_helpers

    return (
        is_distributed_script(file.module)
        or calls_distributed_helpers(file.analysis.source)
        or imported_by_ddp(file.path)
        or ("import *" in file.source and _calls_distributed(file))
    )


def _calls_distributed(file: FileInfo) -> bool:
    """A call of ``torch.distributed`` through a name a star import brings (``from utils import *``
    of a module that does ``import torch.distributed as dist``)."""
    import libcst as cst

    source = file.analysis.source
    return any(_is_distributed(q) for call in source.of_types(cst.Call) for q in source.qualified(call))


def is_distributed_script(module: cst.Module) -> bool:
    import libcst as cst

    from ddpify.tree.cstutil import code, is_name, of_types

    for node in of_types(module, cst.Import, cst.ImportFrom):
        if isinstance(node, cst.Import):
            if any(_is_distributed(code(alias.name)) for alias in node.names):
                return True
        elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            base = code(node.module)
            if _is_distributed(base):
                return True
            if isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                if _is_distributed(f"{base}.{code(alias.name)}") or code(alias.name) in _DISTRIBUTED_NAMES:
                    return True
    for attribute in of_types(module, cst.Attribute):
        assert isinstance(attribute, cst.Attribute)
        if attribute.attr.value in _DISTRIBUTED_NAMES or (is_name(attribute.value, "torch") and attribute.attr.value == "distributed"):
            return True
    return False


def _is_distributed(dotted: str) -> bool:
    return any(dotted == d or dotted.startswith(d + ".") for d in _DISTRIBUTED_MODULES)
