#!/bin/bash
# d3c33ea: are the ranks' tcn data now identical (setup's shared seed for the unseeded numpy RNG), and is the batch_part cut
# disjoint? The converted add_test_ddp.py as ddpify writes it, plus one judge line after the data are drawn that writes
# the sha1 of X_train/Y_train/X_test/Y_test and of numpy's state per rank to $W/hash.<rank>; then the run goes on as
# converted (model inputs recorded by the corpus check shim: with the same data on both ranks, 0% shared = a disjoint cut).
# Also: two plain one-process runs of the converted file (no torchrun) to show numpy is left unseeded there, as in the original.
set -uo pipefail
RUN=/work/main/tests/corpus/unseen20d/run
BIN=${BIN:-/work/judge20d_d3c33ea/bin}  # BIN=/work/judge20d_80a0b63/bin: the same check at 80a0b63 (control)
PY=$BIN/python; DDPIFY=$BIN/ddpify
W=$(mktemp -d /tmp/unseen20d_tcnsame_d3.XXXXXX); trap 'rm -rf "$W"' EXIT
cp -r /work/corpus-unseen20d/TCN/. $W/; cd $W/TCN/adding_problem
export PYTHONPATH="$RUN/shim:$(cd $RUN/../../run/shim && pwd):$PWD"
export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 MPLBACKEND=Agg PYTHONWARNINGS=ignore CORPUS_STUBS=mpl,tb,requests CORPUS_FAKE_CUDA=1
"$DDPIFY" add_test.py -o add_test_ddp.py 2>/dev/null
cmp add_test_ddp.py /work/corpus-unseen20d/_converted_d3c33ea/tcn_add/add_test_ddp.py && echo "[judge] converted file = _converted_d3c33ea/tcn_add/add_test_ddp.py"
cat > $W/hook.py <<'PYEOF'
import hashlib as _h, os as _o, numpy as _n
open(_o.environ.get("JUDGE_HASH", "/dev/null") + "." + _o.environ.get("RANK", "plain"), "w").write(" ".join(k + "=" + _h.sha1(v.numpy().tobytes()).hexdigest()[:12] for k, v in [("X_train", X_train), ("Y_train", Y_train), ("X_test", X_test), ("Y_test", Y_test)]) + " np_state=" + _h.sha1(_n.random.get_state()[1].tobytes()).hexdigest()[:12] + "\n")
PYEOF
"$PY" - "$W/hook.py" <<'PYEOF'
import sys
hook = open(sys.argv[1]).read()
s = open("add_test_ddp.py").read(); anchor = "X_test, Y_test = data_generator(1000, seq_length)\n"
assert s.count(anchor) == 1; open("add_test_ddp.py", "w").write(s.replace(anchor, anchor + hook))
PYEOF
grep -n "data_generator(\|JUDGE_HASH\|hashlib\|batch_part\|ddpify.setup\|ddpify.seed" add_test_ddp.py | cut -c1-160
export CORPUS_CHECK_DIR=$W/check JUDGE_HASH=$W/hash
timeout 300 $BIN/torchrun --standalone --nproc_per_node=2 add_test_ddp.py --seq_len 20 --levels 2 --nhid 8 --ksize 3 --batch_size 1000 --epochs 2 --log-interval 10 2>&1 | grep -v "^W1\|^\*\*\*\|OMP_NUM_THREADS" | tail -3
echo "[run] torchrun exit ${PIPESTATUS[0]}"
for r in 0 1; do echo "[judge] rank $r: $(cat $W/hash.$r)"; done
[ -s $W/hash.0 ] && [ "$(cat $W/hash.0)" = "$(cat $W/hash.1)" ] && echo "[judge] data identical on both ranks" || echo "[judge] data DIFFER across ranks"
"$PY" $RUN/../../run/check_ranks.py $CORPUS_CHECK_DIR --label "tcn_add (as converted; data hashed per rank)"
unset CORPUS_CHECK_DIR
for k in 1 2; do timeout 300 "$PY" add_test_ddp.py --seq_len 20 --levels 2 --nhid 8 --ksize 3 --batch_size 1000 --epochs 1 --log-interval 50 > /dev/null 2>&1; echo "[judge] plain run $k (rc=$?): $(cat $W/hash.plain)"; done
