import numpy as np
import torch
class _Id:
    def __init__(self, *a, **k): pass
    def __call__(self, x): return x
class ToTensor:
    def __call__(self, x):
        if isinstance(x, torch.Tensor): return x
        a = np.asarray(x, dtype=np.float32) / 255.0
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
Resize = Scale = CenterCrop = RandomHorizontalFlip = Normalize = RandomCrop = RandomResizedCrop = Pad = ToPILImage = _Id
class functional:  # noqa
    pass
