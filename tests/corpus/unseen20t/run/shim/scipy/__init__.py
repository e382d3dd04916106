"""Stand-in for scipy (not installed here): scipy.stats.entropy, a scipy.integrate.solve_ivp that raises, and (unseen20f)
scipy.sparse as dense numpy matrices (pyGAT's load_data: csr_matrix, coo_matrix, diags, eye, +, -, .T, .multiply, >, .dot,
.sum, .transpose, .todense)."""
from . import stats, integrate, sparse, linalg, optimize, io, misc  # noqa  (unseen20g: linalg, optimize; unseen20o: io, misc)
