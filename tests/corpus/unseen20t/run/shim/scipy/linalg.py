"""unseen20g: scipy.linalg stand-in (stargan-v2's metrics/fid.py imports it; FID is never computed in the corpus runs)."""
import numpy as np


def sqrtm(a, disp=True):
    raise RuntimeError("scipy stand-in: sqrtm is not available in the corpus runs")


norm = np.linalg.norm
