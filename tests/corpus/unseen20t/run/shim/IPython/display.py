"""unseen20p: import-only stand-in (RelativisticGAN imports IPython.display.Image at the top; never called)."""


class Image:
    def __init__(self, *a, **k):
        raise RuntimeError("IPython stand-in: display.Image is not available in the corpus runs")
