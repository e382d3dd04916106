"""unseen20f: scipy.sparse stand-in backed by dense 2-D numpy arrays (enough for pyGAT's utils.load_data).
unseen20k: astype and the COO views row / col / data (non-zero entries in row-major order: pygcn's
sparse_mx_to_torch_sparse_tensor)."""
import numpy as np


class _M:
    def __init__(self, a, dtype=None):
        self.a = np.asarray(a, dtype=dtype)
        if self.a.ndim == 1:
            self.a = self.a[None, :]

    shape = property(lambda self: self.a.shape)
    T = property(lambda self: _M(self.a.T))

    def _o(self, b):
        return b.a if isinstance(b, _M) else b

    def __add__(self, b): return _M(self.a + self._o(b))
    def __sub__(self, b): return _M(self.a - self._o(b))
    def __gt__(self, b): return _M(self.a > self._o(b))
    def multiply(self, b): return _M(self.a * self._o(b))
    def dot(self, b): return _M(self.a @ self._o(b))
    def transpose(self): return _M(self.a.T)
    def sum(self, axis=None): return np.asarray(self.a.sum(axis=axis)).reshape(-1, 1) if axis == 1 else self.a.sum(axis=axis)
    def todense(self): return np.asarray(self.a)
    def toarray(self): return np.asarray(self.a)
    def tocsr(self): return self
    def tocoo(self): return self
    def astype(self, dtype): return _M(self.a.astype(dtype))
    row = property(lambda self: np.nonzero(self.a)[0])
    col = property(lambda self: np.nonzero(self.a)[1])
    data = property(lambda self: self.a[np.nonzero(self.a)])


def csr_matrix(a, shape=None, dtype=None):
    if isinstance(a, tuple):
        return coo_matrix(a, shape=shape, dtype=dtype)
    return _M(np.asarray(a).astype(dtype or np.float32))


def coo_matrix(a, shape=None, dtype=None):
    if isinstance(a, tuple):
        data, (r, c) = a
        m = np.zeros(shape, dtype=dtype or np.float32)
        np.add.at(m, (np.asarray(r), np.asarray(c)), data)
        return _M(m)
    return _M(np.asarray(a, dtype=dtype))


def diags(v):
    return _M(np.diag(np.asarray(v).reshape(-1)))


def eye(n, dtype=np.float32):
    return _M(np.eye(n, dtype=dtype))


class dok_matrix(dict):
    """unseen20t: a dict keyed by (row, col) as scipy's dok_matrix (NCF's train_mat: m[u, i] = 1.0 and `(u, j) in m`)."""
    def __init__(self, shape, dtype=None):
        super().__init__()
        self.shape, self.dtype = tuple(shape), dtype
