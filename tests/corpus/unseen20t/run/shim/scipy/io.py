"""unseen20o: import-only scipy.io (vae_vampprior's utils/load_data.py imports loadmat at the top; the freyfaces run never
calls it)."""


def loadmat(*a, **k):
    raise RuntimeError("scipy.io stand-in: loadmat is not available")
