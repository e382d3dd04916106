"""Do-nothing matplotlib.gridspec (unseen20o: vae_vampprior utils/visual_evaluation.py): GridSpec(...), its .update and
indexing are stand-ins."""
from matplotlib import _Any


def __getattr__(name):
    if name.startswith("__"): raise AttributeError(name)
    return _Any()


class GridSpec(_Any):
    def __init__(self, *a, **k): pass
    def __getitem__(self, i): return _Any()
