"""Wrapping models in DDP, and getting the plain model (and its state dict) back out."""

from __future__ import annotations

import contextlib
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from torch.nn.parallel import DistributedDataParallel

from ._guard import GuardedDDP, call_site, guards_enabled
from ._process_group import device, setup, world_size

__all__ = ["prepare_model", "unwrap", "wrapped", "through_ddp", "load_state_dict"]

_WRAPPERS = (DistributedDataParallel, nn.DataParallel)
_DDP_PREFIX = "module."
# each wrapped module's DDP wrapper, held weakly both ways (the wrapper holds its module)
_WRAPPER_OF: weakref.WeakKeyDictionary[nn.Module, weakref.ReferenceType[nn.Module]] = weakref.WeakKeyDictionary()


def prepare_model(
    model: nn.Module, *, sync_batchnorm: bool = True, on_rank_device: bool = False, data_parallel: bool = False, **ddp_kwargs: Any
) -> nn.Module:
    """Wrap ``model`` in DistributedDataParallel on this rank's device.

    * One process: ``model`` is returned unchanged (same object), so plain runs match the
      original script; with ``data_parallel=True`` (the script wrapped it in ``nn.DataParallel``,
      which the converter removed, and code it cannot see reads ``model.module``), wrapped in
      ``nn.DataParallel`` as the script did.
    * ``nn.DataParallel`` is unwrapped first (it must not be nested in DDP); an existing DDP
      model is returned as is; a model without trainable parameters is returned as is because
      DDP refuses to wrap it and there is nothing to synchronise.
    * CUDA model: BatchNorm layers become SyncBatchNorm when ``sync_batchnorm`` (per-rank
      batches are smaller than the original batch, so per-rank statistics would be noisier),
      and DDP gets ``device_ids=[model's GPU]``.
    * CPU model: never SyncBatchNorm -- it only supports CUDA tensors and DDP on gloo/CPU rejects
      it -- so BatchNorm statistics stay per rank there.
    * With CUDA, a model on another GPU is moved to this rank's GPU first (every rank on cuda:0
      is the classic mistake). A model on the CPU stays there (DDP on the CPU uses the group's
      gloo part): the script keeps its batches where it puts them, and a model moved behind
      its back would meet CPU targets with CUDA outputs. ``on_rank_device=True`` moves a CPU
      model too: the converter sets it where the model goes on to code it cannot see (another
      file's trainer) that may move it to ``"cuda"`` after the wrap, which DDP cannot follow;
      on this rank's GPU already, that later move is none. A model spread over several
      devices is left as is.
    * The wrapper's ``state_dict()`` has the bare model's keys (no ``module.`` prefix) and its
      ``load_state_dict`` takes either kind (see ``_plain_checkpoint_keys``).
    * Guard rails (unless DDPIFY_GUARDS=0, see ``_guard``): moving the wrapped model to another
      device later raises, and so does an optimizer step whose gradients bypassed the wrapper.

    The process group is set up first if the script has not done so (``setup`` is idempotent).
    """
    site = call_site(1)
    if world_size() <= 1:
        return nn.DataParallel(model) if data_parallel and not isinstance(model, nn.DataParallel) else model
    setup()
    if isinstance(model, nn.DataParallel):
        model = model.module
    if isinstance(model, DistributedDataParallel):
        return model
    params = list(model.parameters())
    if not any(p.requires_grad for p in params):
        return model

    model = _on_rank_device(model, cpu_too=on_rank_device)
    placed = next(iter(model.parameters())).device
    if placed.type == "cuda":
        if sync_batchnorm and any(isinstance(m, _BatchNorm) for m in model.modules()):
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        ddp_kwargs.setdefault("device_ids", [placed.index])
    wrapped = GuardedDDP(model, wrap_site=site, **ddp_kwargs) if guards_enabled() else DistributedDataParallel(model, **ddp_kwargs)
    _plain_checkpoint_keys(wrapped)
    _WRAPPER_OF[model] = weakref.ref(wrapped)
    return wrapped


def prepare_trained(modules: Any, optimizers: Any, **options: Any) -> Any:
    """Wrap, in place, each module held in ``modules`` (a dict, Munch, list or ModuleDict) whose
    parameters one of ``optimizers`` (an optimizer, or a dict or list of them) steps:
    ``ddpify.prepare_trained(self.nets, self.optims)`` after nets from a helper got their
    optimizers in a loop. Which nets train is what the run built, so the run decides; the
    others (EMA copies, a frozen landmark net) stay plain. Returns ``modules``."""
    found = optimizers.values() if isinstance(optimizers, Mapping) else optimizers
    stepping = [found] if isinstance(found, torch.optim.Optimizer) else list(found)
    trained = {id(p) for optimizer in stepping for group in optimizer.param_groups for p in group["params"]}
    keys = list(modules.keys()) if hasattr(modules, "keys") else range(len(modules))
    for key in keys:
        module = modules[key]
        if isinstance(module, nn.Module) and any(id(p) in trained for p in unwrap(module).parameters()):
            modules[key] = prepare_model(module, **options)
    return modules


def _on_rank_device(model: nn.Module, *, cpu_too: bool = False) -> nn.Module:
    """``model`` on this rank's GPU when it sits wholly on another GPU (or, ``cpu_too``, on the
    CPU); otherwise unchanged."""
    target = device()
    placed = {p.device for p in model.parameters()} | {b.device for b in model.buffers()}
    return model.to(target) if _moves_to(placed, target, cpu_too=cpu_too) else model


def _moves_to(placed: set[torch.device], target: torch.device, *, cpu_too: bool = False) -> bool:
    """Whether a model on the devices ``placed`` goes to ``target``: from one other GPU to this
    rank's GPU (and from the CPU when ``cpu_too``). Otherwise the CPU, meta and other
    accelerators stay: the script chose them, and its batches follow its own choice."""
    if target.type != "cuda" or len(placed) != 1:
        return False
    (where,) = placed
    return where.type == "cuda" and where != target or cpu_too and where.type == "cpu"


def _plain_checkpoint_keys(wrapped: nn.Module) -> None:
    """Make the DDP wrapper's checkpoints those of the bare model: ``state_dict()`` drops the
    ``module.`` level and ``load_state_dict`` takes keys with or without it.

    Code ddpify cannot rewrite (a trainer in another file saving ``self.model.state_dict()``,
    an EMA copying ``ema.load_state_dict(model.state_dict())`` into a plain copy) then writes
    checkpoints a one-process run loads, and loads the ones it wrote. The hooks work at any
    depth (a wrapper held by another module): they rename only the keys under their prefix."""
    wrapped._register_state_dict_hook(_drop_module_level)
    wrapped._register_load_state_dict_pre_hook(_add_module_level)


def _drop_module_level(module: nn.Module, state_dict: dict[str, Any], prefix: str, local_metadata: Any) -> None:
    inner = prefix + _DDP_PREFIX
    renamed = [(prefix + k[len(inner) :] if k.startswith(inner) else k, state_dict.pop(k)) for k in list(state_dict)]
    state_dict.update(renamed)  # same order: every key was popped and goes back in turn
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        own = prefix[:-1]  # metadata is keyed by module path without the trailing dot
        inner_path = prefix + _DDP_PREFIX[:-1]
        entries = [(_strip_path(k, inner_path, own), metadata.pop(k)) for k in list(metadata)]
        metadata.update(entries)


def _strip_path(path: str, inner_path: str, own: str) -> str:
    """``G.module.conv`` → ``G.conv``, ``G.module`` → ``G`` (the bare model's own entry wins
    over the wrapper's, which has no state of its own)."""
    if path == inner_path:
        return own
    if path.startswith(inner_path + "."):
        return (own + "." if own else "") + path[len(inner_path) + 1 :]
    return path


def _add_module_level(state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
    """Keys under ``prefix`` without the ``module.`` level get it back (checkpoints of the bare
    model, or of this wrapper); keys that have it (an old DDP checkpoint) stay."""
    inner = prefix + _DDP_PREFIX
    for key in [k for k in state_dict if k.startswith(prefix) and not k.startswith(inner)]:
        state_dict[inner + key[len(prefix) :]] = state_dict.pop(key)


def unwrap(model: Any) -> Any:
    """The bare model inside any DDP / DataParallel wrappers, so attribute access, saving and
    exporting see the user's module; anything else is returned unchanged."""
    while isinstance(model, _WRAPPERS):
        model = model.module
    return model


def wrapped(module: nn.Module) -> nn.Module:
    """The DDP wrapper ``prepare_model`` made for ``module``, else ``module``: a model's own
    training method runs ``ddpify.wrapped(self)(x)`` so that DDP averages its gradients."""
    wrapper = _WRAPPER_OF.get(module)
    found = wrapper() if wrapper is not None else None
    return found if found is not None else module


def through_ddp(model: Any) -> Any:
    """``ddpify.through_ddp(model).log_probs(x)``: the model's own method, run as the DDP
    wrapper's forward (the wrapper calls it instead of ``forward`` for this one call), so the
    backward of what it returns is averaged. ``model`` itself when it is not a DDP wrapper."""
    return _ThroughDDP(model) if isinstance(model, DistributedDataParallel) else model


class _ThroughDDP:
    def __init__(self, wrapper: DistributedDataParallel) -> None:
        self._wrapper = wrapper

    def __getattr__(self, name: str) -> Any:
        wrapper, module = self._wrapper, self._wrapper.module
        method = getattr(module, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            def once(*inner: Any, **named: Any) -> Any:
                module.__dict__.pop("forward", None)  # the method's own self(...) runs the real forward
                return method(*inner, **named)

            module.__dict__["forward"] = once
            try:
                return wrapper(*args, **kwargs)
            finally:
                module.__dict__.pop("forward", None)

        return call


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
