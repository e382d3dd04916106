"""Guard rails: DDP mistakes that run silently (a model moved after its wrap, a training step
whose gradients never went through the wrapper) become errors that name the call site.

The default ones cost nothing per step worth measuring (a flag set in the wrapper's forward,
checked in an optimizer-step pre-hook; see docs/verify.md "Guard rails" for the measurement);
``DDPIFY_GUARDS=0`` turns them off. ``DDPIFY_VERIFY=1`` (set by ``ddpify verify``) adds the costly
one: a forward pre-hook on every module that names the method which bypassed the wrapper.
"""

from __future__ import annotations

import os
import sys
import weakref
from typing import Any, Optional

import torch
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.nn.parallel import DistributedDataParallel as TorchDDP
from torch.optim.optimizer import register_optimizer_step_pre_hook

__all__ = ["GuardError", "DistributedDataParallel", "GuardedDDP", "call_site", "guards_enabled", "note", "verify_mode"]

GUARDS_ENV_VAR = "DDPIFY_GUARDS"
VERIFY_ENV_VAR = "DDPIFY_VERIFY"
RECORDER_MODULE = "ddpify.verify.recorder"

# Frames of these folders are never "the call site": torch's (Module.to, Optimizer.step
# wrappers), contextlib's (ddpify.distributed), the runtime's own and the verify recorder's.
# The code's own file name, not __file__: embedded by --standalone, the runtime has none.
_RUNTIME_DIR = os.path.dirname(sys._getframe(0).f_code.co_filename)
_SKIPPED_DIRS = tuple(
    folder + os.sep
    for folder in (
        os.path.dirname(torch.__file__),
        _RUNTIME_DIR,
        *([os.path.join(os.path.dirname(_RUNTIME_DIR), "verify")] if os.path.basename(_RUNTIME_DIR) == "runtime" else []),
    )
)
_SKIPPED_FILES = ("contextlib.py",)

# Live guarded wrappers. Each optimizer keeps (in its ``_ddpify_guard`` attribute) the wrappers
# it steps, looked up again when a wrapper is added (``_hooks["generation"]``) or its groups change.
_wrappers: weakref.WeakSet = weakref.WeakSet()
# Verify mode: every submodule of a wrapped model -> its wrapper, for naming a bypass.
_owners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_hooks: dict[str, Any] = {"generation": 0}


class GuardError(RuntimeError):
    """A DDP mistake caught at run time. ``row`` names the ``ddpify verify`` property it breaks,
    so a verify run files the message under that row."""

    def __init__(self, message: str, row: str) -> None:
        super().__init__(message)
        self.row = row


def guards_enabled() -> bool:
    """The default guard rails are on unless DDPIFY_GUARDS=0."""
    return os.environ.get(GUARDS_ENV_VAR, "1").strip() != "0"


def verify_mode() -> bool:
    """DDPIFY_VERIFY=1: every guard rail, also those that cost time on every module call."""
    return os.environ.get(VERIFY_ENV_VAR, "").strip() == "1"


def note(kind: str, **data: Any) -> None:
    """Tell the ``ddpify verify`` recorder what the runtime knows (a barrier's name, a guard
    that fired); nothing happens outside a verify run."""
    recorder = sys.modules.get(RECORDER_MODULE)
    if recorder is not None:
        recorder.note(kind, data)


def _skipped(filename: str) -> bool:
    return filename.startswith(_SKIPPED_DIRS) or os.path.basename(filename) in _SKIPPED_FILES


def _where(frame: Any) -> str:
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def call_site(depth: int = 1) -> str:
    """``file.py:line`` of the code that called the runtime: ``depth`` frames above the caller
    of this function, then further up past torch, contextlib and the runtime itself."""
    try:
        frame: Any = sys._getframe(depth + 1)
    except ValueError:
        return "?"
    while frame is not None and _skipped(frame.f_code.co_filename) and frame.f_back is not None:
        frame = frame.f_back
    return _where(frame) if frame is not None else "?"


def _probe_device(fn: Any, device: torch.device) -> Optional[torch.device]:
    """Where ``Module._apply``'s function would put a tensor that is on ``device`` now (tried
    on an empty tensor, so nothing is copied); None when it cannot tell."""
    try:
        moved = fn(torch.empty(0, device=device))
    except Exception:
        return None  # let the real move raise its own error
    return moved.device if isinstance(moved, torch.Tensor) else None


class DistributedDataParallel(TorchDDP):
    """torch's DistributedDataParallel (same name, so ``type(model).__name__`` checks hold) that
    notices two silent mistakes.

    * a move of the wrapped model to another device (``model.to(...)``, ``.cuda()``) raises:
      DDP keeps its buckets and ``device_ids`` where it was built;
    * ``forward`` counts its calls, and the optimizer-step pre-hook checks the count: a step
      whose model has gradients without a forward through this wrapper since that optimizer's
      last step was not averaged across ranks.

    Because that check catches training through them, the model's own public members the
    wrapper lacks are read from the model (``G.sample_latent(n)``, ``model.config`` in code of
    another file that the converter cannot rewrite): sampling and reading work, and a step
    trained only through such a method still raises instead of going unaveraged.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            module = self.__dict__.get("_modules", {}).get("module")
            if module is None or name.startswith("_"):
                raise
            return getattr(module, name)

    def __init__(self, module: torch.nn.Module, *args: Any, wrap_site: str = "?", **kwargs: Any) -> None:
        super().__init__(module, *args, **kwargs)
        # DDP's own unused-parameter handling: nothing for the first-backward check to add
        lenient = bool(kwargs.get("find_unused_parameters") or kwargs.get("static_graph"))
        first = next(iter(module.parameters()), None)
        state = self.__dict__  # plain attributes, not nn.Module.__setattr__: forward sets one each step
        state["_ddpify_device"] = first.device if first is not None else None
        state["_ddpify_site"] = wrap_site
        state["_ddpify_forwards"] = 0
        state["_ddpify_inside"] = 0
        state["_ddpify_naming"] = verify_mode()  # count nesting for _before_module_call
        state["_ddpify_bypass"] = None
        state["_ddpify_first"] = guards_enabled()  # the first training forward is still to come
        state["_ddpify_unused_check"] = guards_enabled() and not lenient
        _register(self)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        state = self.__dict__
        state["_ddpify_forwards"] += 1
        if self.training and (
            state["_ddpify_first"] or state["_ddpify_unused_check"] and torch.is_grad_enabled() and self.require_backward_grad_sync
        ):
            return _first_training_forward(self, inputs, kwargs)
        return self._ddpify_forward(inputs, kwargs)

    def _ddpify_forward(self, inputs: Any, kwargs: Any) -> Any:
        state = self.__dict__
        if not state["_ddpify_naming"]:
            return TorchDDP.forward(self, *inputs, **kwargs)
        state["_ddpify_inside"] += 1
        state["_ddpify_bypass"] = None  # a forward through the wrapper: an earlier bypass is moot
        try:
            return TorchDDP.forward(self, *inputs, **kwargs)
        finally:
            state["_ddpify_inside"] -= 1

    def _apply(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        device = self.__dict__.get("_ddpify_device")
        if device is not None and guards_enabled():
            target = _probe_device(fn, device)
            if target is not None and target != device:
                message = (
                    f"ddpify: {call_site(1)} moves the DDP-wrapped model from {device} to {target} after "
                    f"ddpify.prepare_model wrapped it at {self.__dict__['_ddpify_site']}: DDP keeps its gradient "
                    f"buckets and device_ids on {device}. Move the model before prepare_model, or not at all; for a "
                    f"model on the CPU that code you cannot change moves later, prepare_model(model, on_rank_device=True) "
                    f"puts it on this rank's GPU first."
                )
                note("guard", row="wrapped", message=message)
                raise GuardError(message, "wrapped")
        return super()._apply(fn, *args, **kwargs)


GuardedDDP = DistributedDataParallel  # the name the rest of the runtime uses


def _first_training_forward(wrapper: DistributedDataParallel, inputs: Any, kwargs: Any) -> Any:
    """The wrapped model's first forward in training mode (and its first with gradients on),
    with two one-off checks.

    * Data-dependent initialisation (ActNorm-style ``initialized`` flags): a forward that sets
      parameters from its batch -- this one, or an earlier one that went around the wrapper
      (``model.module(x)`` under ``no_grad``) -- initialises them from this rank's own shard,
      and the ranks' models would never agree again. After this forward the ranks compare a
      fingerprint of their parameters and buffers (one small all-reduce); where they differ,
      rank 0's are copied to every rank (through ``.data``: the graph already built stays
      valid), as one process initialising from rank 0's batch would.
    * Parameters without a gradient (see ``_watch_first_backward``).
    """
    state = wrapper.__dict__
    first, state["_ddpify_first"] = state["_ddpify_first"], False
    output = wrapper._ddpify_forward(inputs, kwargs)
    if first and _ranks_disagree(wrapper.module):
        _adopt_rank_0(wrapper.module)
    if state["_ddpify_unused_check"] and torch.is_grad_enabled() and wrapper.require_backward_grad_sync:  # not in no_sync()
        state["_ddpify_unused_check"] = False
        _watch_first_backward(wrapper)
    return output


def _trained(wrapper: DistributedDataParallel) -> list[tuple[str, torch.nn.Parameter]]:
    """The wrapped model's parameters that require a gradient, with their names."""
    return [(name, p) for name, p in wrapper.module.named_parameters() if p.requires_grad]


def _ranks_disagree(module: torch.nn.Module) -> bool:
    """Whether the ranks' parameters and buffers differ: the sum and the sum of squares of
    every tensor, their maximum and minimum over the ranks compared (one all-reduce, every
    rank asks, so every rank agrees on joining the broadcast that follows)."""
    tensors = [t.detach() for t in [*module.parameters(), *module.buffers()]]
    device = tensors[0].device if tensors else torch.device("cpu")
    if device.type == "cpu" and torch.distributed.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    with torch.no_grad():  # one tensor's float64 copy at a time
        moments = [m.to(device) for t in tensors for m in _moments(t)]
        mine = torch.stack(moments) if moments else torch.zeros(2, device=device, dtype=torch.float64)
        both = torch.cat([mine, -mine])
        torch.distributed.all_reduce(both, op=torch.distributed.ReduceOp.MAX)
    highest, lowest = both[: mine.numel()], -both[mine.numel() :]
    return not torch.equal(highest, lowest)


def _moments(tensor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    wide = tensor.to(torch.float64)
    return wide.sum(), wide.pow(2).sum()


def _adopt_rank_0(module: torch.nn.Module) -> None:
    """Every rank's parameters and buffers become rank 0's."""
    with torch.no_grad():
        for tensor in [*module.parameters(), *module.buffers()]:
            torch.distributed.broadcast(tensor.data, src=0)


def _watch_first_backward(wrapper: DistributedDataParallel) -> None:
    """Raise at the end of the first backward if a parameter that requires a gradient got none.

    DDP without ``find_unused_parameters=True`` waits for every parameter's gradient: one left
    out (a head whose output is discarded, an auxiliary classifier only one loss uses, an EMA
    copy kept inside the model) makes it raise at the *next* forward, in terms of parameter
    indices. Here the names and the fix come at once. Not turned on automatically: that
    option makes DDP walk the autograd graph after every forward, a cost most models need not
    pay, and where the converter could see it was needed it passed the option itself.
    """
    named = _trained(wrapper)
    reached: set[int] = set()
    handles: list[Any] = []

    def finish() -> None:
        for handle in handles:
            handle.remove()
        missing = [name for i, (name, _p) in enumerate(named) if i not in reached]
        if missing:
            _raise_unused(wrapper, missing)

    def reach(index: int) -> Any:
        def hook(grad: torch.Tensor) -> None:
            if not reached:
                torch.autograd.Variable._execution_engine.queue_callback(finish)
            reached.add(index)

        return hook

    handles.extend(p.register_hook(reach(i)) for i, (_name, p) in enumerate(named))


def _raise_unused(wrapper: DistributedDataParallel, missing: list[str]) -> None:
    site = wrapper.__dict__["_ddpify_site"]
    shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
    message = (
        f"ddpify: the first backward through {type(wrapper.module).__name__} (wrapped by ddpify.prepare_model at {site}) gave "
        f"no gradient to {len(missing)} parameter(s) that require one: {shown}. DDP waits for every parameter's gradient and "
        f"would fail at the next step. Where they are unused on some steps (a head whose output is discarded, a loss only "
        f"some steps compute), wrap with find_unused_parameters=True at {site} (ddpify.prepare_model(model, "
        f"find_unused_parameters=True)); where they never train (an EMA copy inside the model), call requires_grad_(False) "
        f"on them before the wrap."
    )
    note("guard", row="run", message=message)
    raise GuardError(message, "run")


def training_now() -> bool:
    """Whether the code running now trains a wrapped model: gradients are on and some model
    wrapped by ddpify is in training mode. Every rank runs the same code, so every rank
    answers alike (``ddpify.distributed_loader(..., only_when_training=True)`` relies on it)."""
    return torch.is_grad_enabled() and any(wrapper.training for wrapper in list(_wrappers))


def _register(wrapper: DistributedDataParallel) -> None:
    """Track ``wrapper`` and install the process-wide hooks once."""
    _wrappers.add(wrapper)
    _hooks["generation"] += 1  # optimizers built before this wrapper may step it too
    if "step" not in _hooks:
        _hooks["step"] = register_optimizer_step_pre_hook(_before_step)
    if verify_mode():
        for module in wrapper.module.modules():
            _owners[module] = wrapper
        if "module" not in _hooks:
            _hooks["module"] = register_module_forward_pre_hook(_before_module_call)


def _stepped_by(optimizer: Any) -> tuple[int, int, list[list[Any]]]:
    """(wrapper generation, parameter groups, ``[weakref to wrapper, its forward count at this
    optimizer's last step]`` for each guarded wrapper ``optimizer`` updates), kept on the
    optimizer (its state_dict and pickle ignore it) until a wrapper or a group is added."""
    ids = {id(p) for group in optimizer.param_groups for p in group["params"]}
    entries = [[weakref.ref(w), 0] for w in list(_wrappers) if any(id(p) in ids for p in w.module.parameters())]
    cached = optimizer.__dict__["_ddpify_guard"] = (_hooks["generation"], len(optimizer.param_groups), entries)
    return cached


def _before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    """Optimizer-step pre-hook: each wrapper this optimizer steps must have run a forward since
    this optimizer's last step if its parameters have gradients. Runs every step: kept to a
    few dictionary reads."""
    cached = optimizer.__dict__.get("_ddpify_guard")
    if cached is None or cached[0] != _hooks["generation"] or cached[1] != len(optimizer.param_groups):
        cached = _stepped_by(optimizer)
    for entry in cached[2]:
        wrapper = entry[0]()
        if wrapper is None:
            continue
        forwards = wrapper.__dict__["_ddpify_forwards"]
        if forwards != entry[1]:
            entry[1] = forwards
            continue
        if guards_enabled() and any(p.grad is not None for p in wrapper.module.parameters()):
            _raise_bypass(wrapper)


def _raise_bypass(wrapper: DistributedDataParallel) -> None:
    state = wrapper.__dict__
    culprit = state["_ddpify_bypass"]
    how = (
        f"{culprit}, on the inner model"
        if culprit
        else "the inner model was called directly (model.module(x), or one of its methods); DDPIFY_VERIFY=1 names the call"
    )
    message = (
        f"ddpify: optimizer.step() at {call_site(1)}: {type(wrapper.module).__name__} (wrapped by ddpify.prepare_model "
        f"at {state['_ddpify_site']}) has gradients, but no forward went through its DistributedDataParallel wrapper "
        f"since the last step, so they were not averaged across ranks: {how}. Call the wrapper (model(x)) instead."
    )
    note("guard", row="forward", message=message)
    raise GuardError(message, "forward")


def _before_module_call(module: torch.nn.Module, args: Any) -> None:
    """Verify mode, every module call: a part of a wrapped model running outside its wrapper's
    forward, with gradients on, is remembered with the method and line that called it."""
    wrapper = _owners.get(module)
    if wrapper is None or wrapper.__dict__["_ddpify_inside"] or not torch.is_grad_enabled():
        return
    if wrapper.__dict__["_ddpify_bypass"] is None:
        wrapper.__dict__["_ddpify_bypass"] = describe_bypass(module, {id(m) for m in wrapper.module.modules()})


def describe_bypass(module: torch.nn.Module, parts: set[int]) -> str:
    """``"Net.encode called at train.py:40"``: the outermost method of the wrapped model on the
    stack (or the called module's forward) and the line that called it."""
    frame: Any = sys._getframe(1)
    method: Optional[Any] = None
    while frame is not None:
        if _skipped(frame.f_code.co_filename):
            frame = frame.f_back
            continue
        owner = frame.f_locals.get("self")
        if owner is None or id(owner) not in parts:
            break
        method = frame
        frame = frame.f_back
    if method is not None:
        name = f"{type(method.f_locals['self']).__name__}.{method.f_code.co_name}"
    else:
        name = f"{type(module).__name__}.forward"
    return f"{name} called at {_where(frame) if frame is not None else '?'}"
