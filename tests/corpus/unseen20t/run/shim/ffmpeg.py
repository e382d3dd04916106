"""unseen20g: import-only stand-in for ffmpeg-python (stargan-v2's core/utils.py; video writing is never reached)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def _no(*a, **k):
        raise RuntimeError("ffmpeg stand-in: not available in the corpus runs")
    return _no
