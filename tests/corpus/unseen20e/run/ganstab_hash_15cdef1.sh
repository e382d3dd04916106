#!/usr/bin/env bash
# Judge's extra check at 15cdef1 (not part of run_all.sh). ganstab_train's recorded ddp run hangs at the wall-clock exit
# (torchrun killed by `timeout 300`, so check_ranks has no rank records), and its recorded verify run died at start-up
# (rank 1 FileExistsError in Logger.__init__). This script takes the converted train_ddp.py as ddpify writes it and adds
# judge lines only: (a) before "# Print stats", each rank appends to $W/h.<rank> its epoch, iteration, the sha1 of the
# discriminator's and the generator's parameters after this iteration's D and G steps, and the sha1 of each row of its
# x_real batch; (b) before `exit(3)`, the rank writes $W/exit.<rank>. Then torchrun (2 ranks, the corpus shims) with
# `timeout 90`, and a summary: parameters equal per iteration, rows disjoint per epoch, rank 0's epoch row sets
# reshuffled, which ranks reached exit(3). Usage: ROOT=... PY=... DDPIFY=... run/ganstab_hash_15cdef1.sh (env as run_all.sh)
MODE=none
source "$(dirname "$0")/ganstab_train.sh"
"$DDPIFY" "$S" -o "$D" 2>/dev/null || { echo "[judge] conversion failed"; exit 3; }
W="$WORK/judge"; mkdir -p "$W"
"$PY" - "$D" "$W" <<'PYEOF'
import sys
path, w = sys.argv[1], sys.argv[2]
s = open(path).read()
hook = (
    "        import hashlib as _h, os as _o\n"
    "        _hs = lambda m: _h.sha1(b''.join(p.detach().cpu().numpy().tobytes() for p in m.parameters())).hexdigest()[:12]\n"
    "        open(%r + '/h.' + _o.environ.get('RANK', 'plain'), 'a').write('%%d %%d D=%%s G=%%s rows=%%s\\n' %% (epoch_idx, it, _hs(discriminator), _hs(generator), ','.join(sorted(_h.sha1(r.detach().cpu().numpy().tobytes()).hexdigest()[:8] for r in x_real))))\n"
) % w
a1 = "        # Print stats\n"
assert s.count(a1) == 1
s = s.replace(a1, hook + a1)
a2 = "                exit(3)\n"
assert s.count(a2) == 1
s = s.replace(a2, "                open(%r + '/exit.' + __import__('os').environ.get('RANK', 'plain'), 'w').write(str(it))\n" % w + a2)
open(path, "w").write(s)
PYEOF
grep -n "prepare_model\|distributed_loader\|per_process_batch\|exit(3)\|_hs(discriminator)" "$D" | cut -c1-150
export CORPUS_CHECK_DIR="$WORK/check"
timeout 90 "$(dirname "$PY")/torchrun" --standalone --nproc_per_node=2 "$D" "${ARGS[@]}" > "$W/out.txt" 2>&1
echo "[run] torchrun exit $? (124 = killed by timeout 90)"
grep -a "Error\|error" "$W/out.txt" | grep -v "^W1" | head -5
"$PY" - "$W" <<'PYEOF'
import sys, os, collections
w = sys.argv[1]
recs = {}
for r in (0, 1):
    p = os.path.join(w, 'h.%d' % r)
    recs[r] = [l.split() for l in open(p)] if os.path.exists(p) else []
    print('[judge] rank %d: %d iterations recorded, last it %s; exit(3) reached: %s' % (r, len(recs[r]), recs[r][-1][1] if recs[r] else '-',
          open(os.path.join(w, 'exit.%d' % r)).read() if os.path.exists(os.path.join(w, 'exit.%d' % r)) else 'no'))
n = min(len(recs[0]), len(recs[1]))
same = sum(1 for i in range(n) if recs[0][i][2:4] == recs[1][i][2:4])
print('[judge] iterations 0..%d: D and G parameters equal on both ranks after %d of %d' % (n - 1, same, n))
rows = {r: collections.defaultdict(list) for r in (0, 1)}
for r in (0, 1):
    for rec in recs[r][:n]:
        rows[r][int(rec[0])] += rec[4][5:].split(',')
eps = sorted(set(rows[0]) & set(rows[1]))
full = [e for e in eps if len(rows[0][e]) == len(rows[1][e]) == 32]
ov = [len(set(rows[0][e]) & set(rows[1][e])) for e in full]
print('[judge] complete epochs on both ranks: %d; rows per rank per epoch 32 (batch 8 per rank x 4); overlap between ranks per epoch: %s' % (len(full), sorted(set(ov))))
print('[judge] union per epoch covers %s distinct rows' % sorted(set(len(set(rows[0][e]) | set(rows[1][e])) for e in full)))
seqs = [tuple(rows[0][e]) for e in full]
print('[judge] rank 0 epoch row sequences: %d distinct of %d epochs; row sets: %d distinct' % (len(set(seqs)), len(seqs), len(set(frozenset(s) for s in seqs))))
PYEOF
