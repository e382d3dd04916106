#!/usr/bin/env bash
# Reproduce ddpify's findings on the ddp21o corpus.
# Usage: run.sh OUTDIR [DDPIFY_CHECKOUT]   e.g. run.sh /work/corpus-ddp21o/_run_82cf1b9 /work/ddpify_82cf1b9
#   OUTDIR: where <local_file with / -> _>.{def,all}.json (and .err) are written
#   DDPIFY_CHECKOUT: a ddpify source checkout to run (PYTHONPATH=<checkout>); default: the code
#                    installed in $PY's environment (/work/main's venv).
# Env: CORPUS (default /work/corpus-ddp21o: the repositories extracted at the commits in sources.tsv),
#      PY (default /work/main/.venv/bin/python), TIMEOUT (seconds per check, default 300; a check that
#      runs longer is killed and recorded as rc=124 with no findings), SKIP_DONE=1 (keep outputs already there),
#      EXCLUDE (bash regex of local_file paths to skip).
# Each file is checked inside its own repository, one file per call, as a pre-commit hook would.
set -u
OUT=$(realpath -m "${1:?usage: run.sh OUTDIR [DDPIFY_CHECKOUT]}")
CHECKOUT=${2:-}
CORPUS=${CORPUS:-/work/corpus-ddp21o}
PY=${PY:-/work/main/.venv/bin/python}
TIMEOUT=${TIMEOUT:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
if [ -n "$CHECKOUT" ]; then export PYTHONPATH=$(realpath "$CHECKOUT"); fi
# record which ddpify is imported (from inside a corpus repository, as the checks run)
(cd "$CORPUS/$(tail -n +2 "$HERE/sources.tsv" | head -1 | cut -f4 | cut -d/ -f1)" && "$PY" -c 'import ddpify; print(ddpify.__file__)') > "$OUT/ddpify_import.txt"
tail -n +2 "$HERE/sources.tsv" | while IFS=$'\t' read -r repo commit path local split; do
  dir=${local%%/*}; rel=${local#*/}; name=${local//\//_}
  if [ -n "${EXCLUDE:-}" ] && [[ "$local" =~ $EXCLUDE ]]; then echo "$local (excluded)"; continue; fi
  for mode in def all; do
    sel=(); [ "$mode" = all ] && sel=(--select ALL)
    if [ "${SKIP_DONE:-0}" = 1 ] && [ -s "$OUT/$name.$mode.json" ]; then echo "$local $mode (kept)"; continue; fi
    start=$(date +%s)
    (cd "$CORPUS/$dir" && timeout "$TIMEOUT" "$PY" -m ddpify check --no-cache --exit-zero -j 1 --output-format json "${sel[@]}" "$rel") \
      > "$OUT/$name.$mode.json" 2> "$OUT/$name.$mode.err"
    rc=$?; echo "$rc $(( $(date +%s) - start ))" > "$OUT/$name.$mode.rc"
    echo "$local $mode rc=$rc secs=$(( $(date +%s) - start )) findings=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$OUT/$name.$mode.json" 2>/dev/null)"
  done
done
