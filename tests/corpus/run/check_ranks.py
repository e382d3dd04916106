#!/usr/bin/env python3
"""Compare the per-rank records written by shim/sitecustomize.py (CORPUS_CHECK_DIR).

    python check_ranks.py DIR [--label TEXT]

Prints one line: ranks found, training rows per rank and their overlap (DataLoader batches, or
the trained model's inputs when no DataLoader fed it), whether all ranks end with equal
parameters, and how many gradient buckets DDP all-reduced per rank.
"""
import json
import sys
from pathlib import Path


def main() -> int:
    folder = Path(sys.argv[1])
    label = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--label" else folder.name
    recs = [json.loads(p.read_text()) for p in sorted(folder.glob("rank*.json"))]
    if not recs:
        print(f"[check] {label}: no rank records (the run died before exit handlers ran)")
        return 1
    parts = [f"[check] {label}: {len(recs)} rank record(s) of world {recs[0]['world']}"]
    # DataLoader passes, compared pass by pass (an epoch's shards must be disjoint; epochs reshuffle)
    passes = [r["loader_passes"] for r in recs]
    if not any(passes):
        parts.append("loader: none")
    else:
        n = min(len(p) for p in passes)
        worst = 0.0
        for k in range(n):
            sets = [set(p[k]) for p in passes]
            if len(sets) > 1 and all(sets):
                worst = max(worst, len(set.intersection(*sets)) / min(len(s) for s in sets))
        rows = "/".join(str(sum(len(x) for x in p)) for p in passes)
        overlap = f", worst pass overlap {100 * worst:.0f}%" if len(recs) > 1 else ""
        parts.append(f"loader: {n} pass(es), rows {rows}{overlap}")
    sets = [set(r["input_rows"]) for r in recs]
    if not any(sets):
        parts.append("model inputs: none")
    else:
        counts = "/".join(str(len(r["input_rows"])) for r in recs)
        if len(sets) > 1:
            inter = set.intersection(*sets)
            parts.append(f"model inputs: {counts}, {100 * len(inter) / (min(len(s) for s in sets) or 1):.0f}% shared")
        else:
            parts.append(f"model inputs: {counts}")
    hashes = {r["param_hash"] for r in recs}
    norms = ", ".join("%.6f" % r["param_l2"] for r in recs)
    parts.append(f"params: {'EQUAL' if len(hashes) == 1 else 'DIFFER'} ({norms})")
    parts.append("allreduce buckets: " + "/".join(str(r["allreduce_buckets"]) for r in recs))
    print("; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
