"""Stand-ins: ToTensor converts arrays / PIL stand-ins to CHW float in [0, 1]; every augmentation is the identity."""
import numpy as np
import torch
from . import functional  # noqa
class _Id:
    def __init__(self, *a, **k): pass
    def __call__(self, x): return x
class ToTensor:
    def __call__(self, x):
        if isinstance(x, torch.Tensor): return x
        a = np.asarray(x)
        scale = 255.0 if a.dtype == np.uint8 else 1.0
        a = a.astype(np.float32) / scale
        if a.ndim == 2: a = a[:, :, None]
        return torch.from_numpy(a.transpose(2, 0, 1).copy())
class Compose:
    def __init__(self, ts): self.transforms = list(ts)
    def __call__(self, x):
        for t in self.transforms: x = t(x)
        return x
class Lambda:
    def __init__(self, f): self.f = f
    def __call__(self, x): return self.f(x)
(Resize, Scale, CenterCrop, RandomHorizontalFlip, RandomVerticalFlip, Normalize, RandomCrop, RandomResizedCrop, Pad,
 ToPILImage, RandomApply, ColorJitter, RandomGrayscale, RandomRotation) = (_Id,) * 14
