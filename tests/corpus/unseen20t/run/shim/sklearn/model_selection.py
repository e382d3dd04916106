"""unseen20s: train_test_split stand-in (seeded, stratified per class when stratify is given) for the pandas stand-in's
read_csv frames (._take) and for lists / numpy arrays."""
import math

import numpy as np


def _take(a, idx):
    if hasattr(a, "_take"):
        return a._take(idx)
    if isinstance(a, np.ndarray):
        return a[idx]
    return [a[i] for i in idx]


def train_test_split(*arrays, test_size=0.25, train_size=None, random_state=None, shuffle=True, stratify=None):
    n = len(arrays[0])
    rng = np.random.RandomState(random_state)
    if stratify is not None:
        labels = list(stratify)
        test = []
        for c in dict.fromkeys(labels):
            idx = [i for i, l in enumerate(labels) if l == c]
            rng.shuffle(idx)
            k = int(round(test_size * len(idx))) if isinstance(test_size, float) else test_size
            test += idx[:k]
    else:
        order = rng.permutation(n) if shuffle else np.arange(n)
        k = int(math.ceil(test_size * n)) if isinstance(test_size, float) else test_size
        test = list(order[:k])
    test = sorted(int(i) for i in test)
    tset = set(test)
    train = [i for i in range(n) if i not in tset]
    rng.shuffle(train)
    out = []
    for a in arrays:
        out += [_take(a, train), _take(a, test)]
    return out
