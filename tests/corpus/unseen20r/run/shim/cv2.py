"""unseen20g: import-only stand-in for OpenCV (stargan-v2's core/wing.py imports it; the runs never reach a cv2 call)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def _no(*a, **k):
        raise RuntimeError("cv2 stand-in: cv2.%s is not available in the corpus runs" % name)
    return _no
