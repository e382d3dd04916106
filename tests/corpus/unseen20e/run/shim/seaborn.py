class _Grid:
    def savefig(self, *a, **k): pass
def lmplot(*a, **k): return _Grid()
