import numpy as np
def entropy(pk, qk=None, axis=0):
    pk = np.asarray(pk, dtype=float); pk = pk / pk.sum(axis=axis, keepdims=True)
    if qk is None:
        return -(pk * np.log(np.where(pk > 0, pk, 1))).sum(axis=axis)
    qk = np.asarray(qk, dtype=float); qk = qk / qk.sum(axis=axis, keepdims=True)
    return (pk * np.log(np.where(pk > 0, pk / qk, 1))).sum(axis=axis)
