"""unseen20g: import-only stand-in for h5py (pytorch-flows' datasets/bsds300.py imports it; BSDS300 is never loaded)."""


class File:
    def __init__(self, *a, **k):
        raise RuntimeError("h5py stand-in: no HDF5 files in the corpus runs")
