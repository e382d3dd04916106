"""visdom stand-in (no server): every Visdom method is a no-op returning None."""
class Visdom:
    def __init__(self, *a, **k): pass
    def __getattr__(self, n): return lambda *a, **k: None
