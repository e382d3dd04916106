"""Do-nothing matplotlib (pyplot, patches, cm): every attribute is a callable that returns itself."""
class _Any:
    def __getattr__(self, _): return self
    def __call__(self, *a, **k): return self
    def __iter__(self): return iter(())
def __getattr__(name):
    if name.startswith("__"): raise AttributeError(name)
    return _Any()
def use(*a, **k): pass
