def make_grid(t, *a, **k): return t
def save_image(*a, **k): pass
