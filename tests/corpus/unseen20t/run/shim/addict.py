"""unseen20n: offline stand-in for addict.Dict: a dict with attribute access, nested dicts converted, a missing key an
empty Dict (as addict's) (llien30/AnoGAN reads its YAML config as CONFIG.batch_size etc.)."""


class Dict(dict):
    def __init__(self, *a, **k):
        super().__init__()
        for d in a:
            for key, v in dict(d).items():
                self[key] = Dict(v) if isinstance(v, dict) else v
        for key, v in k.items():
            self[key] = Dict(v) if isinstance(v, dict) else v

    def __getattr__(self, n):
        if n.startswith("__"):
            raise AttributeError(n)
        return self[n] if n in self else Dict()

    def __setattr__(self, n, v):
        self[n] = v
