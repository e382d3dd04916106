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


def subplots(nrows=1, ncols=1, *a, **k):
    """unseen20k: (figure, axes) as matplotlib returns them - one axes object, or a list of nrows * ncols (a list of
    rows when both are > 1) - so that `fig, axs = plt.subplots(1, 2)` unpacks (normalizing_flows maf.py)."""
    if nrows * ncols == 1:
        return _Any(), _Any()
    if nrows > 1 and ncols > 1:
        return _Any(), [[_Any() for _ in range(ncols)] for _ in range(nrows)]
    return _Any(), [_Any() for _ in range(nrows * ncols)]


def hist(x, *a, **k):
    """unseen20o: (n, bins, patches) as matplotlib returns them (vae_vampprior's plot_histogram unpacks three)."""
    return _Any(), _Any(), _Any()
