#!/usr/bin/env bash
# Judge's extra check at d3c33ea (not part of run_all.sh). made_run's converted file cuts each 100-row batch into 50 + 50
# rows (ddpify.batch_part, run_ddp.py:29) but keeps `loss = ... size_average=False) / B` with B = 100 (run_ddp.py:42), so
# the DDP average of the two ranks' gradients is sum(100 rows) / 200. Which one-process run does the DDP run follow?
# Runs the ORIGINAL run.py as one process under the corpus check shim twice - as is (/ B) and with the loss divided by
# 2*B - and prints check_ranks' parameter sum and the last printed loss of each; compare with logs_d3c33ea/made_run.ddp.txt
# (params: EQUAL (20.200849, ...)). Usage: ROOT=... PY=... run/made_scale_d3c33ea.sh  (same env as run_all.sh)
MODE=none
source "$(dirname "$0")/made_run.sh"
sed 's|size_average=False) / B|size_average=False) / (2*B)|' run.py > run_half.py
grep -n "size_average=False) / (2\*B)" run_half.py
for s in run.py run_half.py; do
  CORPUS_CHECK_DIR="$WORK/check_${s%.py}" timeout 300 "$PY" "$s" "${ARGS[@]}" > "$WORK/out_${s%.py}.txt" 2>&1
  echo "[run] python $s exit $?; last line: $(tail -1 "$WORK/out_${s%.py}.txt")"
  "$PY" "$CHECK_RANKS" "$WORK/check_${s%.py}" --label "made_run one process, $s"
done
