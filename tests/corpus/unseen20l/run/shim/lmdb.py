"""unseen20h: import-only stand-in for lmdb (ddim's datasets/ffhq.py imports it; FFHQ is never loaded)."""


def open(*a, **k):
    raise RuntimeError("lmdb stand-in: no LMDB databases in the corpus runs")
