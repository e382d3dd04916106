from matplotlib import _Any
def __getattr__(name):
    if name.startswith("__"): raise AttributeError(name)
    return _Any()


def savefig(fname, *a, **k):
    """unseen20g: writes a placeholder at fname (so that writes from every rank are visible), no image encoding."""
    if hasattr(fname, "write"):
        fname.write(b"stand-in figure\n")
        return
    with open(fname, "wb") as f:
        f.write(b"stand-in figure\n")
