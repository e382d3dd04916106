"""Offline stand-ins (no download, no files): SHIM_N random images (uint8, seeded per split) that apply the
script's transform to a PIL stand-in, as torchvision's do; subclassable (.data, .targets)."""
import os
import numpy as np
from torch.utils.data import Dataset


def _n():
    return int(os.environ.get("SHIM_N", 64))


class _Images(Dataset):
    shape = (32, 32, 3)
    classes_n = 10

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False, **k):
        rng = np.random.RandomState(0 if train else 1)
        n = _n() if train else max(_n() // 2, 1)
        self.data = rng.randint(0, 256, size=(n,) + self.shape).astype(np.uint8)
        self.targets = [int(t) for t in rng.randint(0, self.classes_n, size=n)]
        self.classes = [str(i) for i in range(self.classes_n)]
        self.transform, self.target_transform, self.train, self.root = transform, target_transform, train, root

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        from PIL import Image
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class CIFAR10(_Images):
    pass


class CIFAR100(_Images):
    classes_n = 100


class MNIST(_Images):
    shape = (28, 28)

    # unseen20i: the torchvision < 0.3 attribute names (Deep-SVDD's MyMNIST reads them): uint8 / int64 tensors
    @property
    def train_data(self):
        import torch
        return torch.from_numpy(self.data)

    test_data = train_data

    @property
    def train_labels(self):
        import torch
        return torch.tensor(self.targets, dtype=torch.int64)

    test_labels = train_labels


FashionMNIST = MNIST


class SVHN(_Images):
    """unseen20f: SVHN(root, split=..., ...) signature."""
    def __init__(self, root=None, split="train", transform=None, target_transform=None, download=False, **k):
        super().__init__(root, split == "train", transform, target_transform, download)


class STL10(_Images):
    """unseen20f: STL10(root, split=..., ...) signature; 96x96 images cost too much here, so 32x32 like CIFAR."""
    def __init__(self, root=None, split="train", folds=None, transform=None, target_transform=None, download=False, **k):
        super().__init__(root, split.startswith("train"), transform, target_transform, download)


class ImageFolder(_Images):
    """unseen20f: importable stand-in (no image decoding); SHIM_N random images.
    unseen20g: when root is a folder with class sub-folders (written by a run script's setup()), it lists them as
    torchvision does (classes sorted, files sorted) and opens each file with PIL.Image.open (the PIL stand-in reads .npy
    arrays whatever the extension)."""
    def __init__(self, root=None, transform=None, target_transform=None, loader=None, is_valid_file=None, **k):
        classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))) \
            if root is not None and os.path.isdir(str(root)) else []
        if not classes:
            super().__init__(root, True, transform)
            self.imgs = self.samples = [(str(i), t) for i, t in enumerate(self.targets)]
            self._files = False
            return
        self.root, self.transform, self.target_transform = root, transform, target_transform
        self.classes, self.class_to_idx = classes, {c: i for i, c in enumerate(classes)}
        self.samples = []
        for i, c in enumerate(classes):
            for dp, _, fs in sorted(os.walk(os.path.join(root, c))):
                self.samples += [(os.path.join(dp, f), i) for f in sorted(fs)]
        self.imgs = self.samples
        self.targets = [t for _, t in self.samples]
        self._files = True

    def __len__(self):
        return len(self.samples) if self._files else len(self.data)

    def __getitem__(self, index):
        if not self._files:
            return super().__getitem__(index)
        from PIL import Image
        path, target = self.samples[index]
        img = Image.open(path).convert("RGB")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


DatasetFolder = ImageFolder
