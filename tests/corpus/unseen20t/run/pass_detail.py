#!/usr/bin/env python3
"""pass_detail.py DIR: per DataLoader pass (records of tests/corpus/run/shim), rows per rank, overlap between ranks,
and on rank 0 which earlier pass holds the very same set of rows (same shard again = no reshuffle)."""
import json, sys
from pathlib import Path
recs = [json.loads(p.read_text()) for p in sorted(Path(sys.argv[1]).glob("rank*.json"))]
passes = [r["loader_passes"] for r in recs]
for k in range(min(len(p) for p in passes)):
    sets = [set(p[k]) for p in passes]
    inter = set.intersection(*sets)
    same = [j for j in range(k) if set(passes[0][j]) == sets[0]]
    print(f"[pass {k}] rows {'/'.join(str(len(p[k])) for p in passes)}; overlap between ranks {len(inter)}; "
          f"rank 0's rows equal to its pass {same if same else 'none'}")
