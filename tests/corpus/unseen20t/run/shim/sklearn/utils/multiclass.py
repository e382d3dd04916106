import numpy as np
def unique_labels(*ys):
    return np.unique(np.concatenate([np.asarray(y).ravel() for y in ys]))
