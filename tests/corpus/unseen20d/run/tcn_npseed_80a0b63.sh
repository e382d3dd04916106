#!/bin/bash
# 80a0b63: is the batch_part cut disjoint? The converted add_test_ddp.py plus np.random.seed(0) before data_generator
# (so both ranks hold the same X_train); whole batches per rank would show 100% shared model inputs, a per-rank cut 0%.
set -uo pipefail
RUN=/work/main/tests/corpus/unseen20d/run
PY=/work/judge20d_80a0b63/bin/python; DDPIFY=/work/judge20d_80a0b63/bin/ddpify
W=$(mktemp -d /tmp/unseen20d_tcnseed80.XXXXXX); trap 'rm -rf "$W"' EXIT
cp -r /work/corpus-unseen20d/TCN/. $W/; cd $W/TCN/adding_problem
export PYTHONPATH="$RUN/shim:$(cd $RUN/../../run/shim && pwd):$PWD"
export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 MPLBACKEND=Agg PYTHONWARNINGS=ignore CORPUS_STUBS=mpl,tb,requests CORPUS_FAKE_CUDA=1
"$DDPIFY" add_test.py -o add_test_ddp.py 2>/dev/null
sed -i 's/^X_train, Y_train = data_generator(50000, seq_length)$/import numpy as _np; _np.random.seed(0)\n&/' add_test_ddp.py
grep -n "random.seed\|batch_part" add_test_ddp.py
export CORPUS_CHECK_DIR=$W/check
timeout 300 /work/judge20d_80a0b63/bin/torchrun --standalone --nproc_per_node=2 add_test_ddp.py --seq_len 20 --levels 2 --nhid 8 --ksize 3 --batch_size 1000 --epochs 2 --log-interval 10 2>&1 | grep -v "^W1\|^\*\*\*\|OMP_NUM_THREADS" | tail -4
echo "[run] torchrun exit ${PIPESTATUS[0]}"
"$PY" $RUN/../../run/check_ranks.py $CORPUS_CHECK_DIR --label "tcn_add (np.random.seed(0) added: same data on both ranks)"
