"""unseen20m: import-only skimage.transform (LynnHo's imlib/transform.py binds resize / rescale); calling raises."""


def resize(*a, **k):
    raise RuntimeError("skimage stand-in: resize is not available in the corpus runs")


rescale = resize
