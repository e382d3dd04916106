"""Do-nothing wandb: init() returns a run with .config.update/.log/.finish; Histogram/Image accept anything.
unseen20m: init(config=dict) also fills the module-level wandb.config (attribute access, as wandb's), the run has an
.id, and wandb.save is a no-op (knowledge-distillation-study reads wandb.config.device, run.id, calls wandb.save).
unseen20o: config.update(argparse.Namespace) takes its vars, as wandb's does (vision-transformers-cifar10)."""
class _Cfg(dict):
    def update(self, *a, **k):
        for d in a:
            dict.update(self, dict(vars(d)) if hasattr(d, "__dict__") and not isinstance(d, dict) else dict(d))
        dict.update(self, k)
    def __getattr__(self, n):
        try:
            return self[n]
        except KeyError:
            raise AttributeError(n)
    def __setattr__(self, n, v):
        self[n] = v
config = _Cfg()
class _Run:
    def __init__(self, id="stand-in"):
        self.config = config
        self.id = id
    def log(self, *a, **k): pass
    def finish(self, *a, **k): pass
def init(*a, config=None, id=None, **k):
    if config is not None:
        globals()["config"].update(dict(config))
    return _Run(id or "stand-in")
def log(*a, **k): pass
def watch(*a, **k): pass
def finish(*a, **k): pass
def save(*a, **k): pass
class Histogram:
    def __init__(self, *a, **k): pass
class Image:
    def __init__(self, *a, **k): pass
