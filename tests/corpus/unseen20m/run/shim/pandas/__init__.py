class DataFrame:
    def __init__(self, d=None): self.d = d
    @classmethod
    def from_dict(cls, d, orient=None): return cls(d)
    def groupby(self, *a, **k): return self
    def head(self, *a, **k): return self
