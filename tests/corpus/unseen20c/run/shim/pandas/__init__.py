class DataFrame:
    def __init__(self, d): self.d = d
    def to_csv(self, path, index=True):
        keys = list(self.d)
        with open(path, "w") as f:
            f.write(",".join(keys) + "\n")
            for row in zip(*(self.d[k] for k in keys)): f.write(",".join(map(str, row)) + "\n")
