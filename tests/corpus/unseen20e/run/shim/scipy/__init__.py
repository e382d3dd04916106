"""Stand-in for scipy (not installed here): scipy.stats.entropy (GAN_stability's inception metric imports it) and a
scipy.integrate.solve_ivp that raises (torchdiffeq imports it for its optional scipy_solver, unused here)."""
from . import stats, integrate  # noqa
