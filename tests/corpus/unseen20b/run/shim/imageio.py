import numpy as np
def imread(path, *a, **k):
    open(path, "rb").close()  # the file must exist
    return np.zeros((2, 2, 3), np.uint8)
def mimsave(path, images, *a, **k):
    open(path, "wb").write(b"gif-stub")
