"""Test-only tracer for end-to-end DDP runs (imported automatically by ``site``).

The e2e harness puts this directory on PYTHONPATH and sets ``DDPIFY_TRACE_DIR``;
Python then imports this module at start-up in every interpreter of the run
(launcher, each rank, spawned helpers).  We wrap a few torch entry points so a
test can check *what the script did* rather than what it printed:

* which dataset indices every DataLoader fetched, per epoch (iterator);
* every ``torch.save`` call, with the rank that made it and any ``module.`` keys;
* a hash of the parameters of every model that was wrapped in DDP, at exit;
* a hash of every ``TensorDataset`` built (to prove ranks generated the same data);
* ``init_process_group`` / ``destroy_process_group`` calls.

Each rank writes ``trace-rank{RANK}.json`` into ``DDPIFY_TRACE_DIR`` at exit.
The wrappers only observe: they call the original with the original arguments,
return its result unchanged, never touch an RNG, and swallow their own errors.
"""
from __future__ import annotations

import os

_TRACE_DIR = os.environ.get("DDPIFY_TRACE_DIR")

if _TRACE_DIR:  # keep every other Python process untouched
    import atexit
    import functools
    import hashlib
    import json
    import sys
    from typing import Any, Callable

    import torch
    import torch.distributed as dist
    import torch.utils.data
    import torch.utils.data.dataloader as _dl
    from torch.nn.parallel import DistributedDataParallel

    _STATE: dict[str, Any] = {
        "loaders": [],  # one record per DataLoader, in construction order
        "saves": [],
        "datasets": [],
        "process_group": None,
        "destroyed_process_group": False,
        "errors": [],  # exceptions raised inside the tracer itself
    }
    _DDP_MODULES: list[tuple[torch.nn.Module, dict[str, Any]]] = []

    def _note_error(where: str, exc: BaseException) -> None:
        """Record (never raise) a failure of the tracer itself."""
        try:
            _STATE["errors"].append(f"{where}: {type(exc).__name__}: {exc}")
        except Exception:
            pass

    def _current_rank() -> int:
        """Env RANK if set (torchrun), else the process-group rank, else 0."""
        env = os.environ.get("RANK")
        if env is not None:
            try:
                return int(env)
            except ValueError:
                pass
        try:
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank()
        except Exception:
            pass
        return 0

    def _tensor_bytes(t: torch.Tensor) -> bytes:
        """Raw bytes of a tensor in its own dtype (works for every dtype incl. bf16)."""
        t = t.detach().cpu().contiguous().reshape(-1)
        return t.view(torch.uint8).numpy().tobytes()

    def _as_float64_bytes(t: torch.Tensor) -> bytes:
        """Bytes of a tensor widened to a canonical dtype, so dtypes don't matter."""
        t = t.detach().cpu()
        if t.is_complex():
            t = t.to(torch.complex128)
        elif t.is_floating_point():
            t = t.to(torch.float64)
        else:
            t = t.to(torch.int64)
        return _tensor_bytes(t)

    # ------------------------------------------------------------------ DataLoader
    _orig_loader_init = torch.utils.data.DataLoader.__init__

    @functools.wraps(_orig_loader_init)
    def _loader_init(self: torch.utils.data.DataLoader, *args: Any, **kwargs: Any) -> None:
        _orig_loader_init(self, *args, **kwargs)
        try:
            try:
                dataset_len = len(self.dataset)  # type: ignore[arg-type]
            except Exception:
                dataset_len = None
            record = {
                "seq": len(_STATE["loaders"]),
                "dataset_len": dataset_len,
                "dataset_type": type(self.dataset).__name__,
                "batch_size": self.batch_size,
                "drop_last": self.drop_last,
                "num_workers": self.num_workers,
                "sampler": type(self.sampler).__name__,
                "batch_sampler": type(self.batch_sampler).__name__ if self.batch_sampler is not None else None,
                "epochs": [],
            }
            _STATE["loaders"].append(record)
            # object.__setattr__: DataLoader.__setattr__ guards some attributes
            object.__setattr__(self, "_ddpify_trace", record)
        except Exception as exc:
            _note_error("DataLoader.__init__", exc)

    torch.utils.data.DataLoader.__init__ = _loader_init  # type: ignore[method-assign]

    def _begin_epoch(it: Any, loader: Any) -> None:
        """A new pass over ``loader`` starts: open a fresh index list for it."""
        try:
            record = getattr(loader, "_ddpify_trace", None)
            if record is None:
                it._ddpify_epoch = None
                return
            epoch = {
                "sampler_epoch": getattr(loader.sampler, "epoch", None),
                "indices": [],
                "batch_sizes": [],
            }
            record["epochs"].append(epoch)
            it._ddpify_epoch = epoch
        except Exception as exc:
            _note_error("begin_epoch", exc)

    _BaseIter = _dl._BaseDataLoaderIter
    _orig_iter_init = _BaseIter.__init__
    _orig_iter_reset = _BaseIter._reset
    _orig_next_index = _BaseIter._next_index

    @functools.wraps(_orig_iter_init)
    def _iter_init(self: Any, loader: Any) -> None:
        _orig_iter_init(self, loader)
        _begin_epoch(self, loader)

    @functools.wraps(_orig_iter_reset)
    def _iter_reset(self: Any, loader: Any, first_iter: bool = False) -> None:
        _orig_iter_reset(self, loader, first_iter)
        # first_iter=True is the multi-worker iterator finishing its own __init__
        # (already counted); False means persistent workers starting a new epoch.
        if not first_iter:
            _begin_epoch(self, loader)

    @functools.wraps(_orig_next_index)
    def _next_index(self: Any) -> Any:
        index = _orig_next_index(self)  # StopIteration propagates untouched
        try:
            epoch = getattr(self, "_ddpify_epoch", None)
            if epoch is not None:
                batch = index if isinstance(index, (list, tuple)) else [index]
                epoch["indices"].extend(int(i) if isinstance(i, int) else None for i in batch)
                epoch["batch_sizes"].append(len(batch))
        except Exception as exc:
            _note_error("_next_index", exc)
        return index

    _BaseIter.__init__ = _iter_init  # type: ignore[method-assign]
    _BaseIter._reset = _iter_reset  # type: ignore[method-assign]
    _BaseIter._next_index = _next_index  # type: ignore[method-assign]

    # ---------------------------------------------------------------- TensorDataset
    _orig_tds_init = torch.utils.data.TensorDataset.__init__

    @functools.wraps(_orig_tds_init)
    def _tds_init(self: torch.utils.data.TensorDataset, *tensors: torch.Tensor) -> None:
        _orig_tds_init(self, *tensors)
        try:
            digest = hashlib.sha256()
            for t in self.tensors:
                digest.update(str((tuple(t.shape), str(t.dtype))).encode())
                digest.update(_tensor_bytes(t))
            _STATE["datasets"].append({
                "seq": len(_STATE["datasets"]),
                "len": len(self),
                "shapes": [list(t.shape) for t in self.tensors],
                "dtypes": [str(t.dtype) for t in self.tensors],
                "sha256": digest.hexdigest(),
            })
        except Exception as exc:
            _note_error("TensorDataset.__init__", exc)

    torch.utils.data.TensorDataset.__init__ = _tds_init  # type: ignore[method-assign]

    # -------------------------------------------------------------------- torch.save
    def _module_prefixed_keys(obj: Any, depth: int = 0, limit: int = 20) -> list[str]:
        """``module.``-prefixed string keys anywhere in nested dicts (state-dict leaks)."""
        found: list[str] = []
        if depth > 4 or not isinstance(obj, dict):
            return found
        for key, value in obj.items():
            if isinstance(key, str) and key.startswith("module."):
                found.append(key)
            if isinstance(value, dict):
                found.extend(_module_prefixed_keys(value, depth + 1, limit))
            if len(found) >= limit:
                break
        return found[:limit]

    _orig_save = torch.save

    @functools.wraps(_orig_save)
    def _save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        entry: dict[str, Any] = {"rank": _current_rank()}
        try:
            if isinstance(f, (str, bytes, os.PathLike)):
                path = os.fsdecode(os.fspath(f))
                entry["path"] = path
                entry["abspath"] = os.path.abspath(path)
            else:
                entry["path"] = "<fileobj>"
                entry["abspath"] = None
            entry["obj_type"] = type(obj).__name__
            entry["keys"] = [str(k) for k in list(obj.keys())[:50]] if isinstance(obj, dict) else None
            entry["module_keys"] = _module_prefixed_keys(obj)
        except Exception as exc:
            _note_error("torch.save", exc)
        entry["ok"] = False
        _STATE["saves"].append(entry)
        result = _orig_save(obj, f, *args, **kwargs)
        entry["ok"] = True
        return result

    torch.save = _save  # type: ignore[assignment]
    torch.serialization.save = _save  # type: ignore[assignment]

    # ---------------------------------------------------------------------- DDP
    _orig_ddp_init = DistributedDataParallel.__init__

    @functools.wraps(_orig_ddp_init)
    def _ddp_init(self: DistributedDataParallel, *args: Any, **kwargs: Any) -> None:
        _orig_ddp_init(self, *args, **kwargs)
        try:
            # Keep the inner module (not the DDP wrapper) alive so we can hash it
            # at exit even after the script's main() has returned.
            info = {
                "seq": len(_DDP_MODULES),
                "module_type": type(self.module).__name__,
                "device_ids": [str(d) for d in (self.device_ids or [])],
                "broadcast_buffers": bool(getattr(self, "broadcast_buffers", False)),
            }
            _DDP_MODULES.append((self.module, info))
        except Exception as exc:
            _note_error("DistributedDataParallel.__init__", exc)

    DistributedDataParallel.__init__ = _ddp_init  # type: ignore[method-assign]

    def _model_hashes(module: torch.nn.Module) -> dict[str, Any]:
        """sha256 of parameters only, and of the full state_dict (params + buffers)."""
        param_ids = {id(p) for p in module.parameters()}
        params = hashlib.sha256()
        state = hashlib.sha256()
        num_params = 0
        for name, value in module.state_dict(keep_vars=True).items():
            if not isinstance(value, torch.Tensor):
                continue
            data = _as_float64_bytes(value)
            state.update(name.encode())
            state.update(data)
            if id(value) in param_ids:
                params.update(data)
                num_params += value.numel()
        return {"param_sha256": params.hexdigest(), "state_sha256": state.hexdigest(),
                "num_params": num_params}

    # ------------------------------------------------------------- process group
    if dist.is_available():
        _orig_init_pg = dist.init_process_group
        _orig_destroy_pg = dist.destroy_process_group

        @functools.wraps(_orig_init_pg)
        def _init_pg(*args: Any, **kwargs: Any) -> Any:
            result = _orig_init_pg(*args, **kwargs)
            try:
                _STATE["process_group"] = {
                    "backend": str(dist.get_backend()),
                    "rank": dist.get_rank(),
                    "world_size": dist.get_world_size(),
                }
            except Exception as exc:
                _note_error("init_process_group", exc)
            return result

        @functools.wraps(_orig_destroy_pg)
        def _destroy_pg(*args: Any, **kwargs: Any) -> Any:
            result = _orig_destroy_pg(*args, **kwargs)
            if not args and kwargs.get("group") is None:
                _STATE["destroyed_process_group"] = True
            return result

        dist.init_process_group = _init_pg  # type: ignore[assignment]
        dist.destroy_process_group = _destroy_pg  # type: ignore[assignment]

    # ---------------------------------------------------------------- writing out
    def _is_launcher() -> bool:
        """True in the torchrun / torch.distributed.launch parent process."""
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        if spec is not None and spec.name in ("torch.distributed.run", "torch.distributed.launch"):
            return True
        return bool(sys.argv) and os.path.basename(sys.argv[0]) == "torchrun"

    def _write_trace() -> None:
        try:
            if _is_launcher():
                return
            import multiprocessing

            pg = _STATE["process_group"]
            # DataLoader workers / other helpers started by multiprocessing are not
            # ranks, unless they joined a process group themselves (mp.spawn style).
            if multiprocessing.parent_process() is not None and pg is None:
                return
            rank = pg["rank"] if pg is not None else _current_rank()
            models = []
            for module, info in _DDP_MODULES:
                entry = dict(info)
                try:
                    entry.update(_model_hashes(module))
                except Exception as exc:
                    _note_error("model hash", exc)
                models.append(entry)
            trace = {
                "rank": rank,
                "env_rank": os.environ.get("RANK"),
                "world_size": int(os.environ.get("WORLD_SIZE", "1")),
                "pid": os.getpid(),
                "argv": list(sys.argv),
                **_STATE,
                "models": models,
                # set before exit handlers run when the script died of an exception
                "uncaught": repr(getattr(sys, "last_value", None)) if getattr(sys, "last_value", None) is not None else None,
            }
            os.makedirs(_TRACE_DIR, exist_ok=True)
            path = os.path.join(_TRACE_DIR, f"trace-rank{rank}.json")
            did_nothing = pg is None and not models and not any(
                _STATE[key] for key in ("loaders", "saves", "datasets"))
            if did_nothing or (pg is None and os.path.exists(path)):
                # Helper interpreters (forkserver, resource tracker, the parent of an
                # mp.spawn run, ...) must not clobber a real rank's trace.
                path = os.path.join(_TRACE_DIR, f"trace-pid{os.getpid()}.json")
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                json.dump(trace, fh)
            os.replace(tmp, path)
        except Exception as exc:  # never turn a passing script into a failing one
            print(f"[ddpify trace shim] could not write trace: {exc!r}", file=sys.stderr)

    atexit.register(_write_trace)
