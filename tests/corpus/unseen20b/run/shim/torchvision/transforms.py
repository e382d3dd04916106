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
    def __init__(self, ts): self.ts = list(ts)
    def __call__(self, x):
        for t in self.ts: x = t(x)
        return x
Resize = CenterCrop = RandomHorizontalFlip = Normalize = RandomCrop = RandomResizedCrop = Pad = _Id
class functional:  # noqa
    pass
