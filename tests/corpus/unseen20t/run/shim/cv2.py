"""unseen20g: import-only stand-in for OpenCV (stargan-v2's core/wing.py imports it; the runs never reach a cv2 call).
unseen20s: imread reads an array that the run script's setup() wrote with numpy.save (whatever the file's extension),
cvtColor(BGR2RGB / RGB2BGR) reverses the channel axis; the flag constants the scripts name exist."""
import numpy as _np

IMREAD_COLOR = 1
IMREAD_GRAYSCALE = 0
COLOR_BGR2RGB = 4
COLOR_RGB2BGR = 4
BORDER_CONSTANT = 0
BORDER_REFLECT_101 = 4
INTER_LINEAR = 1


def imread(path, flags=IMREAD_COLOR):
    try:
        with open(path, "rb") as f:
            return _np.load(f)
    except (OSError, ValueError):
        return None


def cvtColor(img, code):
    if code in (COLOR_BGR2RGB, COLOR_RGB2BGR):
        return _np.ascontiguousarray(img[..., ::-1])
    return img


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def _no(*a, **k):
        raise RuntimeError("cv2 stand-in: cv2.%s is not available in the corpus runs" % name)
    return _no
