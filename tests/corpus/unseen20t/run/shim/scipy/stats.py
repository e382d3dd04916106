import numpy as np
def entropy(pk, qk=None, axis=0):
    pk = np.asarray(pk, dtype=float); pk = pk / pk.sum(axis=axis, keepdims=True)
    if qk is None:
        return -(pk * np.log(np.where(pk > 0, pk, 1))).sum(axis=axis)
    qk = np.asarray(qk, dtype=float); qk = qk / qk.sum(axis=axis, keepdims=True)
    return (pk * np.log(np.where(pk > 0, pk / qk, 1))).sum(axis=axis)


class _Norm:
    """unseen20h: scipy.stats.norm.ppf (disentangling-vae's traversal range) by torch's erfinv, as scipy computes it."""
    @staticmethod
    def ppf(q, loc=0.0, scale=1.0):
        import math
        import torch
        return loc + scale * math.sqrt(2.0) * float(torch.special.erfinv(torch.tensor(2.0 * q - 1.0, dtype=torch.float64)))


    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        """unseen20l: the normal CDF (overhaul-distillation's get_margin_from_BN), as scipy computes it."""
        import math
        return 0.5 * (1.0 + math.erf((x - loc) / (scale * math.sqrt(2.0))))


norm = _Norm()
