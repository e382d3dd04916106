"""unseen20h: skimage.io stand-in (disentangling-vae's utils/datasets.py imports imread; chairs/celeba never load)."""


def imread(*a, **k):
    raise RuntimeError("skimage stand-in: imread is not available in the corpus runs")
