"""imread: a random image of SHIM_IMG x SHIM_IMG (seeded by the path), 3 channels or grayscale."""
import os, zlib
import numpy as np
IMREAD_COLOR, IMREAD_GRAYSCALE = 1, 0
def imread(path, flags=IMREAD_COLOR):
    s = int(os.environ.get("SHIM_IMG", 32))
    rng = np.random.RandomState(zlib.crc32(str(path).encode()) % (2 ** 31))
    shape = (s, s) if flags == IMREAD_GRAYSCALE else (s, s, 3)
    return rng.randint(0, 256, size=shape).astype(np.uint8)
