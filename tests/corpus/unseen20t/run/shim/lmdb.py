"""unseen20h: import-only stand-in for lmdb. unseen20m: a read-only LMDB stand-in: open(path) reads
path/data.pkl (a pickled dict bytes -> bytes, written by a run script's setup()); begin() gives a transaction with
get(key) (deep-text-recognition-benchmark's LmdbDataset: num-samples, label-%09d, image-%09d)."""
import builtins
import os
import pickle


class _Txn:
    def __init__(self, d): self._d = d
    def get(self, key, default=None): return self._d.get(key, default)
    def __enter__(self): return self
    def __exit__(self, *a): return False


class _Env:
    def __init__(self, d): self._d = d
    def begin(self, write=False, **k): return _Txn(self._d)
    def close(self): pass


def open(path, *a, **k):
    f = os.path.join(path, "data.pkl")
    if not os.path.exists(f):
        raise RuntimeError("lmdb stand-in: no data.pkl in %s" % path)
    with builtins.open(f, "rb") as fh:
        return _Env(pickle.load(fh))
