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
        # unseen20t: a small numpy-saved array, so that the imageio / PIL stand-ins can read the figure back
        # (znxlwm cGAN builds its gif from the per-epoch PNGs)
        import numpy as _np
        _np.save(f, _np.zeros((2, 2, 3), dtype=_np.uint8))


def subplots(nrows=1, ncols=1, *a, **k):
    """unseen20k: (figure, axes) as matplotlib returns them - one axes object, or a list of nrows * ncols (a list of
    rows when both are > 1) - so that `fig, axs = plt.subplots(1, 2)` unpacks (normalizing_flows maf.py)."""
    if nrows * ncols == 1:
        return _Any(), _Any()
    if nrows > 1 and ncols > 1:
        # unseen20t: a numpy object array, so that ax[i, j] (znxlwm cGAN show_result) and ax[i][j] both work
        import numpy as _np
        axs = _np.empty((nrows, ncols), dtype=object)
        for _i in range(nrows):
            for _j in range(ncols):
                axs[_i, _j] = _Any()
        return _Any(), axs
    return _Any(), [_Any() for _ in range(nrows * ncols)]


def hist(x, *a, **k):
    """unseen20o: (n, bins, patches) as matplotlib returns them (vae_vampprior's plot_histogram unpacks three)."""
    return _Any(), _Any(), _Any()
