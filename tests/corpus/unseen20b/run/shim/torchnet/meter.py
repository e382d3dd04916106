class AverageValueMeter:
    def __init__(self): self.reset()
    def reset(self): self.s, self.n = 0.0, 0
    def add(self, v, n=1): self.s += v * n; self.n += n
    def value(self): return (self.s / self.n if self.n else float("nan"), 0.0)
