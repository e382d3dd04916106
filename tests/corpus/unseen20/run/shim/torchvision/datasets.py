import os
import torch
from torch.utils.data import Dataset

class _Rand(Dataset):
    def __init__(self, n, shape, classes, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.rand((n,) + shape, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return self.x[i], int(self.y[i])

def CIFAR10(root, train=True, download=False, transform=None, **k):
    return _Rand(int(os.environ.get("SHIM_N", 64)), (3, 32, 32), 10, 0 if train else 1)

def MNIST(root, train=True, download=False, transform=None, **k):
    return _Rand(int(os.environ.get("SHIM_N", 64)), (1, 28, 28), 10, 0 if train else 1)

def ImageFolder(path, transform=None, **k):
    s = int(os.environ.get("SHIM_IMG", 8))
    return _Rand(int(os.environ.get("SHIM_N", 64)), (3, s, s), 2, 0)
