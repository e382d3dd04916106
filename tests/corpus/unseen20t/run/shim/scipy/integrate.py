def solve_ivp(*a, **k):
    raise RuntimeError("scipy stand-in: solve_ivp is not available (torchdiffeq's scipy_solver only)")
