class Compose:
    def __init__(self, ts, *a, **k): self.ts = ts
    def __call__(self, **d):
        for t in self.ts: d = t(**d)
        return d
class OneOf(Compose):
    pass
