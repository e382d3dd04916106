"""unseen20m: import-only skimage.color (LynnHo's imlib/transform.py binds rgb2gray / gray2rgb)."""
import numpy as np


def rgb2gray(a):
    a = np.asarray(a, dtype=float)
    return a[..., :3] @ np.array([0.2125, 0.7154, 0.0721])


def gray2rgb(a):
    a = np.asarray(a)
    return np.stack([a] * 3, axis=-1)
