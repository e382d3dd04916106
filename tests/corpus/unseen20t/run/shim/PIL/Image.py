"""Image.fromarray wraps a uint8 array; .size is (w, h); .resize is nearest-neighbour; np.asarray(img) gives the array."""
import numpy as np
NEAREST, BILINEAR, BICUBIC, LANCZOS = 0, 2, 3, 1
AFFINE, FLIP_LEFT_RIGHT, FLIP_TOP_BOTTOM = 0, 0, 1  # unseen20g
class Resampling:
    NEAREST, BILINEAR, BICUBIC, LANCZOS = 0, 2, 3, 1
class Image:
    def __init__(self, a):
        self._a = np.asarray(a)
        self.mode = "L" if self._a.ndim == 2 else "RGB"
    @property
    def size(self):
        return (self._a.shape[1], self._a.shape[0])
    def resize(self, wh, resample=None):
        w, h = wh
        ys = (np.arange(h) * self._a.shape[0] // h)
        xs = (np.arange(w) * self._a.shape[1] // w)
        return Image(self._a[ys][:, xs])
    def convert(self, mode):
        return self
    # unseen20g: copy/transpose/crop for real; rotate/transform/filter return a copy unchanged (AugMix, SCAN)
    def copy(self):
        return Image(self._a.copy())
    def transpose(self, method):
        return Image((self._a[:, ::-1] if method == FLIP_LEFT_RIGHT else self._a[::-1]).copy())
    def crop(self, box):
        l, t, r, b = box
        return Image(self._a[t:b, l:r].copy())
    def rotate(self, *a, **k):
        return self.copy()
    def transform(self, *a, **k):
        return self.copy()
    def filter(self, *a, **k):
        return self.copy()
    def save(self, fp, *a, **k):  # unseen20f: writes the array (so that writes from every rank are visible)
        np.save(fp if hasattr(fp, "write") else open_w(fp), self._a)
    def __enter__(self):  # unseen20n: `with Image.open(f) as img` (CDAN's data_list.rgb_loader)
        return self
    def __exit__(self, *a):
        return False
    def __array__(self, dtype=None, copy=None):
        return self._a.astype(dtype) if dtype is not None else self._a
def fromarray(a, mode=None):
    return Image(a)
def open(path, *a, **k):
    """unseen20f: a file holding a numpy .npy array (whatever its extension, written by a run script's setup()) opens as
    that array; anything else raises as before (no image decoding in the corpus runs)."""
    try:
        return Image(np.load(path, allow_pickle=False))
    except Exception:
        raise RuntimeError("PIL stand-in: no image decoding in the corpus runs (%s)" % path)


def open_w(fp):
    import builtins
    return builtins.open(fp, "wb")
