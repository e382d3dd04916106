class DataFrame:
    def __init__(self, d=None): self.d = d
    @classmethod
    def from_dict(cls, d, orient=None): return cls(d)
    def groupby(self, *a, **k): return self
    def head(self, *a, **k): return self


class _Row(dict):
    pass


class _ILoc:
    def __init__(self, rows): self.rows = rows
    def __getitem__(self, i): return self.rows[i]


class _Series(list):
    """unseen20s: a column of a read_csv frame: tolist(), unique(), values, len()."""
    def tolist(self): return list(self)
    def unique(self): return list(dict.fromkeys(self))
    def max(self): return max(self)  # unseen20t: NCF's train_data['user'].max()
    @property
    def values(self): return list(self)


class _CsvFrame:
    """unseen20n: read_csv result: len(), .iloc[i][column] (string values; ints where the text is an int), columns.
    unseen20s: frame[column] (a _Series), .shape, and subsets (_take) for the sklearn stand-in's train_test_split."""
    def __init__(self, rows, columns):
        self.rows, self.columns = rows, columns
        self.iloc = _ILoc(rows)
    def __len__(self): return len(self.rows)
    def __getitem__(self, col): return _Series(r[col] for r in self.rows)
    @property
    def shape(self): return (len(self.rows), len(self.columns))
    def _take(self, idx): return _CsvFrame([self.rows[i] for i in idx], self.columns)
    @property
    def values(self):
        """unseen20t: rows as a list of lists in column order (NCF's train_data.values.tolist())."""
        return _Values([[r[c] for c in self.columns] for r in self.rows])


class _Values(list):
    def tolist(self): return [list(r) for r in self]


def read_csv(path, *a, **k):
    import csv
    if k.get("header", "infer") is None:
        # unseen20t: header=None with names= / usecols= / sep= (NCF's load_all: sep='\t', names=['user', 'item'],
        # usecols=[0, 1]); values are ints where the text is an int
        names, use, sep = k.get("names"), k.get("usecols"), k.get("sep", ",")
        rows = []
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                cells = line.rstrip("\n").split(sep)
                if use is not None:
                    cells = [cells[i] for i in use]
                cols = names or list(range(len(cells)))
                rows.append(_Row({c: int(v) if v.strip().lstrip("-").isdigit() else v for c, v in zip(cols, cells)}))
        return _CsvFrame(rows, list(names or range(len(rows[0]) if rows else 0)))

    def val(s):
        try:
            return int(s)
        except ValueError:
            return s

    with open(path, newline="") as f:
        r = csv.DictReader(f)
        rows = [_Row({c: val(v) for c, v in row.items()}) for row in r]
        return _CsvFrame(rows, r.fieldnames)
