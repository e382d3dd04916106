class SummaryWriter:
    def __init__(self, *a, **k): pass
    def __getattr__(self, n): return lambda *a, **k: None
