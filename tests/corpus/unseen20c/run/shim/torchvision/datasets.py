"""Offline stand-ins: random tensors of the right shapes (no download, no files)."""
import os
import zlib
import numpy as np
import torch
from torch.utils.data import Dataset


def _n():
    return int(os.environ.get("SHIM_N", 64))


class _Rand(Dataset):
    def __init__(self, n, shape, classes, seed, transform=None):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.rand((n,) + shape, generator=g) * 2 - 1
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.classes = [str(i) for i in range(classes)]
        self.transform = transform
    def __len__(self): return len(self.x)
    def __getitem__(self, i):
        x = self.x[i]
        if self.transform is not None:
            x = self.transform(x)
        return x, int(self.y[i])


def MNIST(root, train=True, download=False, transform=None, **k):
    s = int(os.environ.get("SHIM_IMG", 28))
    return _Rand(_n(), (1, s, s), 10, 0 if train else 1)

FashionMNIST = MNIST

def CIFAR10(root, train=True, download=False, transform=None, **k):
    return _Rand(_n(), (3, 32, 32), 10, 0 if train else 1)


class CIFAR100(Dataset):
    """Subclassable like torchvision's: .data uint8 NHWC, .targets list, transform applied to a PIL image."""
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        rng = np.random.RandomState(0 if train else 1)
        n = _n() if train else max(_n() // 2, 1)
        self.data = rng.randint(0, 256, size=(n, 32, 32, 3)).astype(np.uint8)
        self.targets = [int(t) for t in rng.randint(0, 100, size=n)]
        self.transform, self.target_transform, self.train = transform, target_transform, train
    def __len__(self): return len(self.data)
    def __getitem__(self, index):
        from PIL import Image
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        return img, target


class ImageFolder(_Rand):
    """Subclassable (FactorVAE's CustomImageFolder): random SHIM_IMG images; .imgs/.loader as torchvision's."""
    def __init__(self, root, transform=None, **k):
        path = root
        s = int(os.environ.get("SHIM_IMG", 8))
        name = os.path.basename(os.path.normpath(str(path)))
        seed = {"val": 1, "test": 2}.get(name, 0) + (zlib.crc32(name.encode()) % 1000 if os.environ.get("SHIM_SEED_BY_PATH") else 0)
        super().__init__(_n(), (3, s, s), int(os.environ.get("SHIM_CLASSES", 2)), seed)
        self.imgs = [(i, int(self.y[i])) for i in range(len(self.x))]
        self.loader = lambda i: self.x[i]


def SVHN(root, split='train', transform=None, download=False, **k):
    return _Rand(_n(), (3, 32, 32), 10, {"train": 0, "extra": 3, "test": 1}[split])


def LSUN(root, classes=None, transform=None, **k):
    s = int(os.environ.get("SHIM_IMG", 32))
    return _Rand(_n(), (3, s, s), 1, 0)
