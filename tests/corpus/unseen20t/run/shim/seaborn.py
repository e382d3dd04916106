class _Grid:
    def savefig(self, *a, **k): pass
def lmplot(*a, **k): return _Grid()
def set(*a, **k): pass  # unseen20f: ncsn toy_runner calls sns.set() at import
def __getattr__(name):  # unseen20f: any other seaborn function (set_style, kdeplot, ...) is a no-op
    if name.startswith("__"):
        raise AttributeError(name)
    return lambda *a, **k: None
