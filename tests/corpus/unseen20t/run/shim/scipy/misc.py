"""unseen20o: scipy.misc.logsumexp (scipy < 1.0; later scipy.special.logsumexp), numpy only: vae_vampprior's models
import it for the importance-sampled log-likelihood."""
import numpy as np


def logsumexp(a, axis=None, keepdims=False):
    a = np.asarray(a, dtype=np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else (np.squeeze(out, axis=axis) if axis is not None else out.reshape(()))


def imread(*a, **k):
    """unseen20p: import-only (RelativisticGAN's fid.py imports scipy.misc.imread; FID is never computed)."""
    raise RuntimeError("scipy stand-in: misc.imread is not available in the corpus runs")
