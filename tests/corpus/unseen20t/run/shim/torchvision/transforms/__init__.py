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
class RandomErasing(_Id):
    """unseen20m: the identity, as the other augmentations here (pneumonia_classification's train transform)."""
class Compose:
    def __init__(self, ts): self.transforms = list(ts)
    def __call__(self, x):
        for t in self.transforms: x = t(x)
        return x
class Lambda:
    def __init__(self, f): self.f = f
    def __call__(self, x): return self.f(x)
(RandomHorizontalFlip, RandomVerticalFlip, Normalize, RandomResizedCrop,
 RandomApply, ColorJitter, RandomGrayscale, RandomRotation) = (_Id,) * 8
RandomAffine = _Id  # unseen20t: pt.darts preproc (mnist)
RandomSizedCrop = _Id
class RandomCrop:
    """unseen20l: a real random crop (after a zero pad when padding is given) of a PIL stand-in, array or tensor, the
    offsets drawn from torch's RNG as torchvision draws them; an image already of the size passes unchanged."""
    def __init__(self, size, padding=None, *a, **k):
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.padding = padding
    def __call__(self, x):
        from PIL import Image
        pil = hasattr(x, "resize") and not isinstance(x, (torch.Tensor, np.ndarray))
        a = np.asarray(x) if pil else x
        if self.padding:
            p = self.padding if isinstance(self.padding, int) else self.padding[0]
            if isinstance(a, torch.Tensor):
                a = torch.nn.functional.pad(a, (p,) * 4)
            else:
                a = np.pad(a, [(p, p), (p, p)] + [(0, 0)] * (a.ndim - 2))
        h, w = (a.shape[-2], a.shape[-1]) if isinstance(a, torch.Tensor) else a.shape[:2]
        th, tw = self.size
        if (h, w) != (th, tw):
            i = int(torch.randint(0, h - th + 1, size=(1,)).item())
            j = int(torch.randint(0, w - tw + 1, size=(1,)).item())
            a = a[..., i:i + th, j:j + tw] if isinstance(a, torch.Tensor) else a[i:i + th, j:j + tw]
        return Image.fromarray(np.ascontiguousarray(a)) if pil else a
class ToPILImage:
    """unseen20l: a CHW float tensor in [0, 1] (or an array) becomes the PIL stand-in (uint8 HWC; one channel 2-D), so
    that a following Resize resizes it as torchvision's does (SRGAN's train_lr_transform / display_transform)."""
    def __init__(self, *a, **k): pass
    def __call__(self, x):
        from PIL import Image
        if isinstance(x, torch.Tensor):
            a = x.detach().cpu().float().numpy()
            a = (np.clip(a, 0, 1) * 255).round().astype(np.uint8).transpose(1, 2, 0)
            return Image.fromarray(a[:, :, 0] if a.shape[2] == 1 else a)
        if isinstance(x, np.ndarray):
            return Image.fromarray(x)
        return x
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

class CenterCrop:
    """unseen20q: a real center crop of a PIL stand-in (CloserLookFewShot: Scale to 1.15x then CenterCrop to the model's
    input size); tensors and arrays pass unchanged."""
    def __init__(self, size, *a, **k): self.size = (size, size) if isinstance(size, int) else tuple(size)
    def __call__(self, x):
        if not hasattr(x, "crop") or isinstance(x, (torch.Tensor, np.ndarray)): return x
        w, h = x.size; th, tw = self.size; t, l = (h - th) // 2, (w - tw) // 2
        return x.crop((l, t, l + tw, t + th))
# unseen20r: torchvision.transforms.InterpolationMode (an enum of names; the stand-in Resize ignores it) and
# RandAugment (the identity, as every augmentation here) - WickedFoxes/simple_task_pytorch src/aug/augmentaion.py.
import enum as _enum
class InterpolationMode(_enum.Enum):
    NEAREST = "nearest"; NEAREST_EXACT = "nearest-exact"; BILINEAR = "bilinear"; BICUBIC = "bicubic"
    BOX = "box"; HAMMING = "hamming"; LANCZOS = "lanczos"
RandAugment = _Id
