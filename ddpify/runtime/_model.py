"""Wrapping models in DDP, and getting the plain model (and its state dict) back out."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from torch.nn.parallel import DistributedDataParallel

from ._guard import GuardedDDP, call_site, guards_enabled
from ._process_group import device, setup, world_size

__all__ = ["prepare_model", "unwrap", "load_state_dict"]

_WRAPPERS = (DistributedDataParallel, nn.DataParallel)
_DDP_PREFIX = "module."


def prepare_model(model: nn.Module, *, sync_batchnorm: bool = True, **ddp_kwargs: Any) -> nn.Module:
    """Wrap ``model`` in DistributedDataParallel on this rank's device.

    * One process: ``model`` is returned unchanged (same object), so plain runs match the
      original script.
    * ``nn.DataParallel`` is unwrapped first (it must not be nested in DDP); an existing DDP
      model is returned as is; a model without trainable parameters is returned as is because
      DDP refuses to wrap it and there is nothing to synchronise.
    * CUDA model: BatchNorm layers become SyncBatchNorm when ``sync_batchnorm`` (per-rank
      batches are smaller than the original batch, so per-rank statistics would be noisier),
      and DDP gets ``device_ids=[model's GPU]``.
    * CPU model: never SyncBatchNorm -- it only supports CUDA tensors and DDP on gloo/CPU rejects
      it -- so BatchNorm statistics stay per rank there.
    * With CUDA, a model on the CPU or on another GPU is moved to this rank's GPU first (every
      rank on cuda:0 is the classic mistake); a model spread over several devices is left as is.
    * Guard rails (unless DDPIFY_GUARDS=0, see ``_guard``): moving the wrapped model to another
      device later raises, and so does an optimizer step whose gradients bypassed the wrapper.

    The process group is set up first if the script has not done so (``setup`` is idempotent).
    """
    site = call_site(1)
    if world_size() <= 1:
        return model
    setup()
    if isinstance(model, nn.DataParallel):
        model = model.module
    if isinstance(model, DistributedDataParallel):
        return model
    params = list(model.parameters())
    if not any(p.requires_grad for p in params):
        return model

    model = _on_rank_device(model)
    placed = next(iter(model.parameters())).device
    if placed.type == "cuda":
        if sync_batchnorm and any(isinstance(m, _BatchNorm) for m in model.modules()):
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        ddp_kwargs.setdefault("device_ids", [placed.index])
    if guards_enabled():
        return GuardedDDP(model, wrap_site=site, **ddp_kwargs)
    return DistributedDataParallel(model, **ddp_kwargs)


def _on_rank_device(model: nn.Module) -> nn.Module:
    """``model`` on this rank's GPU when CUDA is usable and it sits wholly on one other device
    (the CPU, or another rank's GPU); otherwise unchanged."""
    target = device()
    placed = {p.device for p in model.parameters()} | {b.device for b in model.buffers()}
    if target.type != "cuda" or len(placed) != 1 or next(iter(placed)) == target:
        return model
    if next(iter(placed)).type not in ("cpu", "cuda"):
        return model  # meta or another accelerator: the script knows what it does
    return model.to(target)


def unwrap(model: Any) -> Any:
    """The bare model inside any DDP / DataParallel wrappers, so attribute access, saving and
    exporting see the user's module; anything else is returned unchanged."""
    while isinstance(model, _WRAPPERS):
        model = model.module
    return model


def load_state_dict(model: nn.Module, state_dict: Mapping[str, Any], strict: bool = True) -> Any:
    """Load a state dict whether or not it (or the model) came from a DDP/DataParallel wrapper.

    Checkpoints written from ``model.state_dict()`` of a wrapped model carry a ``module.``
    prefix on every key; it is stripped on a shallow copy so the caller's dict is untouched.
    Returns whatever ``nn.Module.load_state_dict`` returns (missing/unexpected keys).
    """
    target = unwrap(model)
    if state_dict and all(isinstance(k, str) and k.startswith(_DDP_PREFIX) for k in state_dict):
        copy: OrderedDict[str, Any] = OrderedDict(state_dict)
        metadata = getattr(state_dict, "_metadata", None)
        if metadata is not None:
            # consume_prefix_... rewrites _metadata in place too; give it a copy of its own.
            copy._metadata = OrderedDict(metadata)  # type: ignore[attr-defined]
        consume_prefix_in_state_dict_if_present(copy, _DDP_PREFIX)
        state_dict = copy
    return target.load_state_dict(state_dict, strict=strict)


@contextlib.contextmanager
def sync_gradients(model: nn.Module, when: bool) -> Iterator[None]:
    """Gradient accumulation: run a micro-batch's forward and backward inside this, with
    ``when`` true only on the micro-batch that steps the optimizer.

    On the others DDP's ``no_sync()`` skips the all-reduce, so gradients accumulate locally
    and are averaged once per optimizer step instead of once per micro-batch (same result,
    a fraction of the communication). Not distributed, or ``when`` true: plain execution.
    """
    if not when and isinstance(model, DistributedDataParallel):
        with model.no_sync():
            yield
    else:
        yield
