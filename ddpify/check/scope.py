"""Which files the DDP rules apply to.

A file is a *distributed script* when it imports ``torch.distributed`` (any submodule or
alias), ``DistributedDataParallel``, or ``ddpify.runtime``, or names ``torch.distributed.``
through ``import torch``. A plain single-GPU script is not checked (``--require-ddp`` turns
that into finding DDP000), because every DDP rule would be noise there.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ddpify.cstutil import findall

from ddpify.convert.facts import code

_DISTRIBUTED_MODULES = ("torch.distributed", "torch.nn.parallel.distributed", "ddpify.runtime", "ddpify")
_DISTRIBUTED_NAMES = ("DistributedDataParallel",)


def mentions_distributed(source: str) -> bool:
    """Cheap text pre-filter: no parse for files that cannot be distributed scripts."""
    return "distributed" in source or "DistributedDataParallel" in source or "ddpify" in source


def is_distributed_script(module: cst.Module) -> bool:
    for node in findall(module, m.Import() | m.ImportFrom()):
        if isinstance(node, cst.Import):
            if any(_is_distributed(code(alias.name)) for alias in node.names):
                return True
        elif node.module is not None and not node.relative:
            base = code(node.module)
            if _is_distributed(base):
                return True
            if isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                if _is_distributed(f"{base}.{code(alias.name)}") or code(alias.name) in _DISTRIBUTED_NAMES:
                    return True
    return bool(findall(module, m.Attribute(value=m.Name("torch"), attr=m.Name("distributed"))))


def _is_distributed(dotted: str) -> bool:
    return any(dotted == d or dotted.startswith(d + ".") for d in _DISTRIBUTED_MODULES)
