def gaussian(*a, **k):
    raise RuntimeError("skimage stand-in: gaussian is not available in the corpus runs")
