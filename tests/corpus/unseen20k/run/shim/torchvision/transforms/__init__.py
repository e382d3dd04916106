"""Stand-ins (unseen20e: Pad pads for real): ToTensor converts arrays / PIL stand-ins to CHW float in [0, 1]; every augmentation is the identity."""
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
(CenterCrop, RandomHorizontalFlip, RandomVerticalFlip, Normalize, RandomCrop, RandomResizedCrop,
 ToPILImage, RandomApply, ColorJitter, RandomGrayscale, RandomRotation) = (_Id,) * 11
class Resize:
    """unseen20h: a real nearest resize of a PIL stand-in (int: the shorter side, as torchvision; (h, w): exact);
    tensors and arrays pass unchanged (as the unseen20g identity did)."""
    def __init__(self, size, *a, **k): self.size = size
    def __call__(self, x):
        if not hasattr(x, "resize") or isinstance(x, (torch.Tensor, np.ndarray)): return x
        w, h = x.size
        if isinstance(self.size, int):
            if w <= h: nw, nh = self.size, max(1, int(self.size * h / w))
            else: nh, nw = self.size, max(1, int(self.size * w / h))
        else: nh, nw = self.size
        return x if (nw, nh) == (w, h) else x.resize((nw, nh))
Scale = Resize
class Pad:
    """unseen20e: a real zero pad of the last two dims of a tensor (the image size changes, as with torchvision)."""
    def __init__(self, padding, fill=0, *a, **k): self.p = padding if isinstance(padding, int) else padding[0]
    def __call__(self, x):
        if isinstance(x, torch.Tensor): return torch.nn.functional.pad(x, (self.p,) * 4, value=0.0)
        a = np.asarray(x); pw = [(self.p, self.p), (self.p, self.p)] + [(0, 0)] * (a.ndim - 2)
        return np.pad(a, pw)

import sys as _sys
transforms = _sys.modules[__name__]  # unseen20f: `from torchvision.transforms import transforms` (PyTorch-BYOL)
