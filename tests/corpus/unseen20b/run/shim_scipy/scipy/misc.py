"""scipy.misc.imsave (removed from scipy >= 1.2) as a stand-in that writes the array's bytes."""
import numpy as np
def imsave(path, arr):
    open(path, "wb").write(np.asarray(arr).tobytes()[:64])
