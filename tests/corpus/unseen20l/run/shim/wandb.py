"""Do-nothing wandb: init() returns a run with .config.update/.log/.finish; Histogram/Image accept anything."""
class _Cfg(dict):
    def update(self, *a, **k): pass
class _Run:
    def __init__(self): self.config = _Cfg()
    def log(self, *a, **k): pass
    def finish(self, *a, **k): pass
def init(*a, **k): return _Run()
def log(*a, **k): pass
def watch(*a, **k): pass
def finish(*a, **k): pass
class Histogram:
    def __init__(self, *a, **k): pass
class Image:
    def __init__(self, *a, **k): pass
