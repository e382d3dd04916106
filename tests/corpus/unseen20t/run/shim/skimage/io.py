"""unseen20h: skimage.io stand-in (disentangling-vae's utils/datasets.py imports imread; chairs/celeba never load).
unseen20m: imsave writes the array with numpy (np.save to the given path, so that writes from every rank are visible;
LynnHo's imlib.imwrite); imshow is a no-op."""
import numpy as np


def imread(*a, **k):
    raise RuntimeError("skimage stand-in: imread is not available in the corpus runs")


def imsave(fname, arr, *a, **k):
    with open(fname, "wb") as f:
        np.save(f, np.asarray(arr))


def imshow(*a, **k):
    pass
show = imshow
