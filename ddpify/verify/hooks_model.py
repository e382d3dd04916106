"""Recorder hooks on models and optimizers: every DDP wrap (with the parameters before DDP's
broadcast), forwards through each wrapper, parts of a wrapped model called outside it, every
optimizer step (what it updates, the RNG states, forwards since that optimizer's last step),
parameter hashes after the first step and at the end; and the stop after ``--steps``.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import random
import sys
import weakref
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from ddpify.runtime._guard import describe_bypass
from ddpify.verify.hooks_data import tensor_digest
from ddpify.verify.recording import Recorder, user_frame, where

__all__ = ["VerifyError", "install"]


class VerifyError(RuntimeError):
    """A mistake the recorder stops the run for (a wrapped model moved to another device);
    ``row`` is the verdict row it belongs to."""

    def __init__(self, message: str, row: str) -> None:
        super().__init__(message)
        self.row = row


class _Wrapped:
    """One DDP wrapper: its inner model (kept alive for the hashes at exit) and counters."""

    __slots__ = ("ident", "module", "site", "device", "forwards", "inside", "bypass", "parts")

    def __init__(self, ident: int, module: torch.nn.Module, site: str) -> None:
        self.ident = ident
        self.module = module
        self.site = site
        first = next(iter(module.parameters()), None)
        self.device: torch.device | None = first.device if first is not None else None
        self.forwards = 0
        self.inside = 0
        self.bypass: str | None = None
        self.parts = {id(m) for m in module.modules()}


def param_digest(module: torch.nn.Module) -> str | None:
    """Hash of a model's parameters (not buffers: BatchNorm statistics may differ per rank)."""
    try:
        return tensor_digest(list(module.parameters()))
    except Exception:
        return None  # meta tensors, freed storage


def rng_digests() -> dict[str, str]:
    """Short hashes of the RNG states a training step may draw from."""

    def short(data: bytes) -> str:
        return hashlib.sha1(data).hexdigest()[:12]

    out = {"torch": short(torch.get_rng_state().numpy().tobytes()), "python": short(repr(random.getstate()).encode())}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state = numpy.random.get_state()
        out["numpy"] = short(state[1].tobytes() + str(state[2]).encode())
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        out["cuda"] = short(torch.cuda.get_rng_state().numpy().tobytes())
    return out


def _probe_device(fn: Any, device: torch.device) -> torch.device | None:
    try:
        moved = fn(torch.empty(0, device=device))
    except Exception:
        return None
    return moved.device if isinstance(moved, torch.Tensor) else None


def _owner_name(params: list[torch.Tensor]) -> str:
    """The module that holds most of ``params`` (the smallest such), for naming an unwrapped
    model; a search through the garbage collector's objects, done once when one is found."""
    ids = {id(p) for p in params}
    best: tuple[tuple[int, int], torch.nn.Module] | None = None
    for obj in gc.get_objects():
        if isinstance(obj, torch.nn.Module):
            owned = {id(p) for p in obj.parameters()}
            score = (len(owned & ids), -len(owned))
            if score[0] and (best is None or score > best[0]):
                best = (score, obj)
    return type(best[1]).__name__ if best is not None else "?"


def _own_leading_sizes(module: torch.nn.Module) -> list[int]:
    """The first dimension of every parameter and buffer (two dimensions or more) that the
    script's own modules register themselves, not torch.nn's layers: a size there may be the
    batch's (Glow's learned prior ``prior_h`` of shape [batch_size, C, H, W]), which a split
    batch would no longer match."""
    found: set[int] = set()
    for part in module.modules():
        if type(part).__module__.startswith("torch."):
            continue
        for tensor in [*part.parameters(recurse=False), *part.buffers(recurse=False)]:
            if tensor.dim() >= 2:
                found.add(int(tensor.shape[0]))
    return sorted(found)


def install(rec: Recorder) -> None:
    """Patch DistributedDataParallel and hook every module call and optimizer step."""
    wrapped: list[_Wrapped] = []
    by_wrapper: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    owners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    original_init, original_forward, original_apply = (
        DistributedDataParallel.__init__,
        DistributedDataParallel.forward,
        DistributedDataParallel._apply,
    )

    @functools.wraps(original_init)
    def ddp_init(self: Any, module: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        before = param_digest(module)  # before DDP copies rank 0's parameters to every rank
        original_init(self, module, *args, **kwargs)
        entry = _Wrapped(len(wrapped), self.module, where(user_frame(1)))
        wrapped.append(entry)
        by_wrapper[self] = entry
        for part in self.module.modules():
            owners[part] = entry
        rec.emit(
            "wrap",
            id=entry.ident,
            model=type(self.module).__name__,
            site=entry.site,
            before=before,
            after=param_digest(self.module),
            device=str(entry.device),
            tensors=len(list(self.module.parameters())),
            leading=_own_leading_sizes(self.module),
        )

    @functools.wraps(original_forward)
    def ddp_forward(self: Any, *inputs: Any, **kwargs: Any) -> Any:
        entry = by_wrapper.get(self)
        if entry is None:
            return original_forward(self, *inputs, **kwargs)
        entry.forwards += 1
        entry.inside += 1
        if torch.is_grad_enabled():
            rec.training = True
        try:
            return original_forward(self, *inputs, **kwargs)
        finally:
            entry.inside -= 1

    @functools.wraps(original_apply)
    def ddp_apply(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        entry = by_wrapper.get(self)
        if entry is not None and entry.device is not None:
            target = _probe_device(fn, entry.device)
            if target is not None and target != entry.device:
                message = (
                    f"ddpify verify: {where(user_frame(1))} moves the DDP-wrapped {type(self.module).__name__} from "
                    f"{entry.device} to {target} after it was wrapped at {entry.site}: DDP keeps its buckets and "
                    f"device_ids on {entry.device}. Move the model before wrapping it."
                )
                rec.emit("guard", row="wrapped", message=message)
                raise VerifyError(message, "wrapped")
        return original_apply(self, fn, *args, **kwargs)

    DistributedDataParallel.__init__ = ddp_init  # type: ignore[method-assign]
    DistributedDataParallel.forward = ddp_forward  # type: ignore[method-assign]
    DistributedDataParallel._apply = ddp_apply  # type: ignore[method-assign]

    def before_module(module: torch.nn.Module, args: Any) -> None:
        entry = owners.get(module)
        if entry is not None and not entry.inside and entry.bypass is None and torch.is_grad_enabled():
            entry.bypass = describe_bypass(module, entry.parts)

    register_module_forward_pre_hook(before_module)
    _install_steps(rec, wrapped)
    rec.at_exit.append(lambda: rec.emit("params", when="end", digests={str(w.ident): param_digest(w.module) for w in wrapped}))


def _install_steps(rec: Recorder, wrapped: list[_Wrapped]) -> None:
    """Optimizer-step hooks: one "step" event per step of any optimizer."""
    numbers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> (id, steps so far)
    seen: dict[tuple[int, int], int] = {}  # (optimizer id, wrapper id) -> wrapper forwards at that optimizer's last step
    main: list[Any] = []  # weakref to the first optimizer that stepped: its steps are "the" steps

    def coverage(optimizer: Any, ident: int) -> None:
        wrapped_ids = {id(p) for w in wrapped for p in w.module.parameters()}
        trained = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        unwrapped = [p for p in trained if id(p) not in wrapped_ids]
        rec.emit(
            "optimizer",
            id=ident,
            kind=type(optimizer).__name__,
            site=where(user_frame(2)),
            trained=len(trained),
            unwrapped=len(unwrapped),
            owner=_owner_name(unwrapped) if unwrapped else None,
        )

    def before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        rec.training = True
        if optimizer not in numbers:
            numbers[optimizer] = (len(numbers), 0)
            coverage(optimizer, numbers[optimizer][0])
        ident, count = numbers[optimizer]
        numbers[optimizer] = (ident, count + 1)
        if not main:
            main.append(weakref.ref(optimizer))
        ids = {id(p) for group in optimizer.param_groups for p in group["params"]}
        wrappers: dict[str, list[Any]] = {}
        bypass: dict[str, str] = {}
        for entry in wrapped:
            if not any(id(p) in ids for p in entry.module.parameters()):
                continue
            forwards = entry.forwards - seen.get((ident, entry.ident), 0)
            seen[(ident, entry.ident)] = entry.forwards
            grads = any(p.grad is not None for p in entry.module.parameters())
            wrappers[str(entry.ident)] = [forwards, grads]
            if forwards == 0 and grads and entry.bypass:
                bypass[str(entry.ident)] = entry.bypass
            entry.bypass = None
        fields: dict[str, Any] = {"opt": ident, "n": count + 1, "main": main[0]() is optimizer, "w": wrappers}
        if bypass:
            fields["bypass"] = bypass
        if fields["main"]:
            fields["rng"] = rng_digests()
            fields["pass"] = rec.passes
        rec.emit("step", **fields)

    def after_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        if not main or main[0]() is not optimizer:
            return
        rec.steps += 1
        if rec.steps == 1:
            rec.emit("params", when="step 1", digests={str(w.ident): param_digest(w.module) for w in wrapped})
        if rec.stop_after is not None and rec.steps >= rec.stop_after:
            rec.emit("stop", step=rec.steps)
            if dist.is_available() and dist.is_initialized():
                dist.distributed_c10d.barrier()  # every rank stops at this step, none leaves early
            raise SystemExit(0)

    register_optimizer_step_pre_hook(before_step)
    register_optimizer_step_post_hook(after_step)
