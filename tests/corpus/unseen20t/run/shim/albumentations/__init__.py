"""unseen20s: offline stand-in for albumentations (boostcamp level1-imageclassification-cv-16's util/augmentation.py):
Compose / Resize (nearest neighbour) / Normalize / HorizontalFlip / VerticalFlip on HxWxC numpy images, called as
t(image=img) -> {'image': ...}; every other transform is the identity (it still draws its p from Python's random, as
albumentations does)."""
import random as _random

import numpy as _np


class BasicTransform:
    def __init__(self, *a, p=1.0, always_apply=False, **k):
        self.p = p

    def __call__(self, image=None, **k):
        if _random.random() < self.p:
            image = self.apply(image)
        return dict(k, image=image)

    def apply(self, img):
        return img


DualTransform = ImageOnlyTransform = BasicTransform


class Compose:
    def __init__(self, transforms, *a, **k):
        self.transforms = list(transforms)

    def __call__(self, **data):
        for t in self.transforms:
            data = t(**data)
        return data


class OneOf(Compose):
    def __init__(self, transforms, p=0.5, **k):
        super().__init__(transforms)
        self.p = p

    def __call__(self, **data):
        if self.transforms and _random.random() < self.p:
            data = _random.choice(self.transforms)(**data)
        return data


class Resize(BasicTransform):
    def __init__(self, height, width, *a, **k):
        super().__init__(p=1.0)
        self.h, self.w = height, width

    def apply(self, img):
        ys = (_np.arange(self.h) * img.shape[0] // self.h)
        xs = (_np.arange(self.w) * img.shape[1] // self.w)
        return img[ys][:, xs]


class Normalize(BasicTransform):
    def __init__(self, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225), max_pixel_value=255.0, *a, **k):
        super().__init__(p=1.0)
        self.mean, self.std, self.m = _np.array(mean, _np.float32), _np.array(std, _np.float32), max_pixel_value

    def apply(self, img):
        return ((img.astype(_np.float32) / self.m) - self.mean) / self.std


class HorizontalFlip(BasicTransform):
    def apply(self, img):
        return _np.ascontiguousarray(img[:, ::-1])


class VerticalFlip(BasicTransform):
    def apply(self, img):
        return _np.ascontiguousarray(img[::-1])


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return type(name, (BasicTransform,), {})
