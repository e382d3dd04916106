"""unseen20g: sklearn.datasets.make_moons as scikit-learn writes it (random_state=None draws from numpy's global RNG)."""
import numpy as np


def _rng(random_state):
    if random_state is None or random_state is np.random:
        return np.random.mtrand._rand
    if isinstance(random_state, (int, np.integer)):
        return np.random.RandomState(random_state)
    return random_state


def make_moons(n_samples=100, *, shuffle=True, noise=None, random_state=None):
    n_out, n_in = (n_samples // 2, n_samples - n_samples // 2) if isinstance(n_samples, (int, np.integer)) else n_samples
    g = _rng(random_state)
    outer_x, outer_y = np.cos(np.linspace(0, np.pi, n_out)), np.sin(np.linspace(0, np.pi, n_out))
    inner_x, inner_y = 1 - np.cos(np.linspace(0, np.pi, n_in)), 1 - np.sin(np.linspace(0, np.pi, n_in)) - 0.5
    X = np.vstack([np.append(outer_x, inner_x), np.append(outer_y, inner_y)]).T
    y = np.hstack([np.zeros(n_out, dtype=np.intp), np.ones(n_in, dtype=np.intp)])
    if shuffle:
        idx = np.arange(X.shape[0]); g.shuffle(idx); X, y = X[idx], y[idx]
    if noise is not None:
        X += g.normal(scale=noise, size=X.shape)
    return X, y
