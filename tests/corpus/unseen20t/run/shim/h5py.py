"""unseen20k: a reading stand-in for h5py. File(path) loads a pickled dict written by a run script's setup() (a "HDF5"
file here is a pickle of {name: numpy array | {key: numpy array}}): f[name] gives the array or the dict, len() and
[idx] / [str(idx)] work as on h5py datasets and groups (yjn870/SRCNN-pytorch datasets.py). Writing is not supported.
(unseen20g-20j: import-only; pytorch-flows' datasets/bsds300.py imports it and never loads a file.)"""
import pickle


class File:
    def __init__(self, name, mode="r", *a, **k):
        if mode != "r":
            raise RuntimeError("h5py stand-in: read only")
        # unseen20p: CORPUS_H5_PATH stands in for a hard-coded absolute path that does not exist here
        # (pytorch-SRResNet's main_srresnet.py opens "/path/to/your/hdf5/data/like/rgb_srresnet_x4.h5").
        import os
        if not os.path.exists(name) and os.environ.get("CORPUS_H5_PATH"):
            name = os.environ["CORPUS_H5_PATH"]
        with open(name, "rb") as f:
            self._d = pickle.load(f)

    def __getitem__(self, key):
        return self._d[key]

    def get(self, key, default=None):
        """unseen20p: hf.get(name) as h5py's File.get (pytorch-SRResNet's dataset.py)."""
        return self._d.get(key, default)

    def keys(self):
        return self._d.keys()

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False
