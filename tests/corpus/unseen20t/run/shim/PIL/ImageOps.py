"""unseen20g: PIL.ImageOps stand-ins (AugMix / SCAN augmentations): every operation returns a copy of the image
unchanged (the corpus runs grade the DDP conversion, not the augmentation); flips flip."""


def _copy(img, *a, **k):
    return img.copy()


autocontrast = equalize = posterize = solarize = invert = grayscale = _copy


def mirror(img):
    from .Image import Image
    return Image(img._a[:, ::-1].copy())


def flip(img):
    from .Image import Image
    return Image(img._a[::-1].copy())
