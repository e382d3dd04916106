"""unseen20h: ImageDraw stand-in: Draw(img) whose drawing calls do nothing (disentangling-vae's add_labels)."""


class _Draw:
    def __init__(self, img, *a, **k):
        self.im = img

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None


def Draw(img, *a, **k):
    return _Draw(img)
