"""unseen20i: stand-in for librosa (not installed): load(path, sr) reads a .npy array written by a run script's setup()
(whatever the extension) and returns (float32 audio, sr); no resampling."""
import numpy as np


def load(path, sr=22050, mono=True, **k):
    with open(path, "rb") as f:
        return np.load(f).astype(np.float32), sr
