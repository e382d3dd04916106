"""Test harness for tests/corpus/run/*.sh: offline stubs and per-rank instrumentation.

Imported automatically (sitecustomize) when this folder is on PYTHONPATH. Does nothing unless
the environment asks for it:

  CORPUS_STUBS=mpl,tb,requests   matplotlib / torch.utils.tensorboard.SummaryWriter / requests
                                 replaced by do-nothing stand-ins when the package is missing
                                 (requests: any call raises - the runs must never download).
  CORPUS_CHECK_DIR=DIR           record, per process, and write DIR/rank<R>.json at exit:
      loader_passes a hash of every sample row of every batch a DataLoader yields, per pass
      input_rows    a hash of every row of the first tensor given to a *trained* module's
                    forward with grad enabled (outermost call only: DDP, not its .module)
      params        a hash and the L2 norm of all parameters held by the optimizers
      allreduce     how many gradient buckets DDP all-reduced (a counting comm hook)

The scripts under test are not modified; this only observes them.
"""
import atexit
import hashlib
import json
import os
import sys
import types


def _stub_missing(name, build):
    try:
        __import__(name)
    except Exception:
        build()


def _mpl():
    class _Any:
        def __getattr__(self, _):
            return self

        def __call__(self, *a, **k):
            return self

        def __iter__(self):
            return iter(())

    def module_getattr(name, _a=_Any()):
        if name.startswith("__"):
            raise AttributeError(name)
        return _a

    for mod in ("matplotlib", "matplotlib.pyplot", "matplotlib.cm"):
        m = types.ModuleType(mod)
        m.__getattr__ = module_getattr
        sys.modules[mod] = m


def _tb():
    import torch.utils

    class SummaryWriter:
        def __init__(self, log_dir=None, *a, **k):
            self.log_dir = log_dir or "runs/stub"

        def __getattr__(self, _):
            return lambda *a, **k: None

    m = types.ModuleType("torch.utils.tensorboard")
    m.SummaryWriter = SummaryWriter
    sys.modules["torch.utils.tensorboard"] = m
    torch.utils.tensorboard = m


def _requests():
    m = types.ModuleType("requests")

    def _no(*a, **k):
        raise RuntimeError("corpus run: network access attempted (requests)")

    m.get = m.post = m.request = _no
    sys.modules["requests"] = m


_STUBS = {s.strip() for s in os.environ.get("CORPUS_STUBS", "").split(",") if s.strip()}
if "mpl" in _STUBS:
    _stub_missing("matplotlib", _mpl)
if "requests" in _STUBS:
    _stub_missing("requests", _requests)
if "tb" in _STUBS:
    try:
        import tensorboard  # noqa: F401
    except Exception:
        _tb()


def _install_checks(out_dir):
    import torch
    import torch.nn as nn

    record = {"loader_passes": [], "input_rows": [], "allreduce": 0, "optimizers": 0}
    optimizers = []
    depth = [0]
    outer = []

    def rows(t):
        if not isinstance(t, torch.Tensor) or t.dim() == 0:
            return []
        t = t.detach().to("cpu").contiguous()
        return [hashlib.sha1(t[i].numpy().tobytes()).hexdigest()[:16] for i in range(t.shape[0])]

    def first_tensor(x):
        if isinstance(x, torch.Tensor):
            return x
        if isinstance(x, (list, tuple)):
            for y in x:
                t = first_tensor(y)
                if t is not None:
                    return t
        if isinstance(x, dict):
            for y in x.values():
                t = first_tensor(y)
                if t is not None:
                    return t
        return None

    # every batch any DataLoader yields
    from torch.utils.data import DataLoader

    original_iter = DataLoader.__iter__

    def counting_iter(self):
        seen = []  # one list per pass over a loader: shards are compared pass by pass (epoch by epoch)
        record["loader_passes"].append(seen)
        for batch in original_iter(self):
            seen.extend(rows(first_tensor(batch)))
            yield batch

    DataLoader.__iter__ = counting_iter

    # optimizers (their parameters are "trained")
    original_opt_init = torch.optim.Optimizer.__init__

    def opt_init(self, *a, **k):
        original_opt_init(self, *a, **k)
        optimizers.append(self)
        record["optimizers"] += 1

    torch.optim.Optimizer.__init__ = opt_init

    def trained_ids():
        return {id(p) for o in optimizers for g in o.param_groups for p in g["params"]}

    def pre_hook(module, args):
        if depth[0] == 0 and torch.is_grad_enabled() and module.training:
            ids = trained_ids()
            if any(id(p) in ids for p in module.parameters(recurse=True)):
                record["input_rows"].extend(rows(first_tensor(args)))
                depth[0] += 1
                outer.append(module)

    def post_hook(module, args, output):
        if outer and outer[-1] is module:
            outer.pop()
            depth[0] -= 1

    nn.modules.module.register_module_forward_pre_hook(pre_hook)
    nn.modules.module.register_module_forward_hook(post_hook)

    # count DDP's gradient all-reduces with a comm hook that does the default all-reduce
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    original_ddp_init = DDP.__init__

    def ddp_init(self, *a, **k):
        original_ddp_init(self, *a, **k)

        def hook(state, bucket):
            record["allreduce"] += 1
            return default_hooks.allreduce_hook(None, bucket)

        self.register_comm_hook(None, hook)

    DDP.__init__ = ddp_init

    def dump():
        if not optimizers and not record["loader_passes"] and not record["input_rows"]:
            return  # not a training process (e.g. the torchrun agent itself)
        params = [p for o in optimizers for g in o.param_groups for p in g["params"]]
        h = hashlib.sha1()
        sq = 0.0
        for p in params:
            t = p.detach().to("cpu").float().contiguous()
            h.update(t.numpy().tobytes())
            sq += float((t.double() ** 2).sum())
        rank = int(os.environ.get("RANK", "0"))
        data = {
            "rank": rank,
            "world": int(os.environ.get("WORLD_SIZE", "1")),
            "optimizers": record["optimizers"],
            "n_params": len(params),
            "param_hash": h.hexdigest()[:16],
            "param_l2": sq ** 0.5,
            "allreduce_buckets": record["allreduce"],
            "loader_passes": [p for p in record["loader_passes"] if p],
            "input_rows": record["input_rows"],
        }
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
            json.dump(data, f)

    atexit.register(dump)


if os.environ.get("CORPUS_CHECK_DIR"):
    _install_checks(os.environ["CORPUS_CHECK_DIR"])
