# unseen20g: the functional ops DeepLabV3Plus-Pytorch's ext_transforms use, on the PIL stand-in (nearest resize, zero pad,
# crop, flips) and on tensors (to_tensor, normalize); rotate (DomainBed's RotatedMNIST, never run) and colour ops are identity.
import numpy as _np
import torch as _torch


def _arr(img):
    return _np.asarray(img)


def _img(a):
    from PIL import Image
    return Image.fromarray(a)


def resize(img, size, interpolation=None, *a, **k):
    if isinstance(size, int):
        w, h = img.size
        if w <= h:
            size = (int(size * h / w), size)
        else:
            size = (size, int(size * w / h))
    h, w = size
    return img.resize((w, h), interpolation)


def pad(img, padding, fill=0, padding_mode="constant"):
    if isinstance(padding, int):
        l = t = r = b = padding
    elif len(padding) == 2:
        l, t = padding; r, b = padding
    else:
        l, t, r, b = padding
    a = _arr(img)
    pw = [(t, b), (l, r)] + [(0, 0)] * (a.ndim - 2)
    return _img(_np.pad(a, pw, constant_values=fill))


def crop(img, top, left, height, width):
    a = _arr(img)
    return _img(a[top:top + height, left:left + width])


def center_crop(img, output_size):
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    w, h = img.size
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img):
    if isinstance(img, _torch.Tensor):
        return img.flip(-1)
    return _img(_arr(img)[:, ::-1].copy())


def vflip(img):
    if isinstance(img, _torch.Tensor):
        return img.flip(-2)
    return _img(_arr(img)[::-1].copy())


def to_tensor(pic):
    from . import ToTensor
    return ToTensor()(pic)


def normalize(tensor, mean, std, inplace=False):
    m = _torch.as_tensor(mean, dtype=tensor.dtype).view(-1, 1, 1)
    s = _torch.as_tensor(std, dtype=tensor.dtype).view(-1, 1, 1)
    return (tensor - m) / s


def rotate(img, *a, **k):
    return img


def adjust_brightness(img, *a, **k): return img
def adjust_contrast(img, *a, **k): return img
def adjust_saturation(img, *a, **k): return img
def adjust_hue(img, *a, **k): return img
