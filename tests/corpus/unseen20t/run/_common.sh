# Sourced by run/<name>.sh (which sets NAME, REPO, SUBDIR, SCRIPT, ARGS and may define setup()).
# Copies the fetched repo ($CORPUS/$REPO, default CORPUS=/work/corpus-unseen20t) to a scratch dir, puts the
# offline stand-ins (shim/), the corpus check shim (tests/corpus/run/shim, sitecustomize) and the fetched deps on
# PYTHONPATH, then, by MODE:
#   orig     python SCRIPT ARGS                                   (the original, one process: baseline)
#   convert  ddpify SCRIPT -o SCRIPT_ddp.py; report -> reports/NAME.report.txt, result -> $CORPUS/_converted/NAME/
#   ddp      torchrun --standalone --nproc_per_node=2 SCRIPT_ddp.py ARGS, then check_ranks.py
#   plain    python SCRIPT_ddp.py ARGS                            (the converted script as one process)
#   verify   ddpify verify SCRIPT_ddp.py -- ARGS
#   follow   the user follows a report that says "convert the file that holds the training loop": each file in
#            FOLLOW is converted in place (reports -> reports/NAME.follow.FILE.report.txt), then SCRIPT runs under
#            torchrun with the checks (FOLLOW_VERIFY=1: under ddpify verify instead)
# ROOT is the ddpify checkout to judge (default /work/main; its .venv provides ddpify, python, torchrun).
# REPORTS (default reports/) and CONVERTED (default $CORPUS/_converted) say where convert/follow write (a re-run keeps
# the earlier ones); convert also keeps the *_ddp.py companions ddpify writes beside the project's modules.
set -uo pipefail
RUN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HERE="$(cd "$RUN_DIR/.." && pwd)"
CHECK_SHIM="$(cd "$RUN_DIR/../../run/shim" && pwd)"
CHECK_RANKS="$(cd "$RUN_DIR/../../run" && pwd)/check_ranks.py"
ROOT="${ROOT:-/work/main}"
PY="${PY:-$ROOT/.venv/bin/python}"
DDPIFY="${DDPIFY:-$ROOT/.venv/bin/ddpify}"
CORPUS="${CORPUS:-/work/corpus-unseen20t}"
REPORTS="${REPORTS:-$HERE/reports}"
CONVERTED="${CONVERTED:-$CORPUS/_converted}"
MODE="${MODE:-ddp}"
WORK="$(mktemp -d /tmp/unseen20t_${NAME}.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "[run] $WORK" >&2 || trap 'rm -rf "$WORK"' EXIT
cp -r "$CORPUS/$REPO/." "$WORK/"
cd "$WORK/${SUBDIR:-.}"
export PYTHONPATH="$RUN_DIR/shim${EXTRA_SHIM:+:$EXTRA_SHIM}:$CHECK_SHIM:$PWD"
export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 MPLBACKEND=Agg PYTHONWARNINGS=ignore CORPUS_STUBS=mpl,tb,requests CORPUS_FAKE_CUDA=1
ulimit -v 6000000
declare -F setup >/dev/null && setup
S="$SCRIPT"; D="${S%.py}_ddp.py"
convert() { "$DDPIFY" "$S" -o "$D" 2> "$WORK/report.txt"; local rc=$?; cat "$WORK/report.txt" >&2; return $rc; }
case "$MODE" in
  orig) timeout 300 "$PY" "$S" "${ARGS[@]}" ;;
  convert) convert; rc=$?
     mkdir -p "$REPORTS" "$CONVERTED/$NAME"; cp "$WORK/report.txt" "$REPORTS/$NAME.report.txt"
     cp "$D" "$CONVERTED/$NAME/" 2>/dev/null
     find . -name '*_ddp.py' ! -path "./$D" | while read -r c; do mkdir -p "$CONVERTED/$NAME/$(dirname "$c")"; cp "$c" "$CONVERTED/$NAME/$c"; done
     exit $rc ;;
  ddp) convert >/dev/null 2>&1 || { echo "[run] conversion failed"; exit 3; }
     export CORPUS_CHECK_DIR="$WORK/check"
     timeout 300 "$(dirname "$PY")/torchrun" --standalone --nproc_per_node=2 "$D" "${ARGS[@]}"; rc=$?
     echo "[run] torchrun exit $rc"; "$PY" "$CHECK_RANKS" "$CORPUS_CHECK_DIR" --label "$NAME"
     [ -n "${SHOW_FILES:-}" ] && (for f in $SHOW_FILES; do ls -la $f 2>&1; done)
     [ -n "${CKPTS:-}" ] && "$PY" "$RUN_DIR/ckpt_keys.py" $CKPTS
     [ -n "${AFTER:-}" ] && eval "$AFTER"
     exit $rc ;;
  plain) convert >/dev/null 2>&1 || { echo "[run] conversion failed"; exit 3; }
     timeout 300 "$PY" "$D" "${ARGS[@]}"; rc=$?; echo "[run] python exit $rc"; exit $rc ;;
  follow) mkdir -p "$REPORTS"
     for f in $FOLLOW; do "$DDPIFY" "$f" --in-place 2> "$REPORTS/$NAME.follow.${f//\//_}.report.txt"; echo "[run] ddpify $f --in-place: rc=$?"; done
     if [ "${FOLLOW_VERIFY:-0}" = 1 ]; then timeout 500 "$DDPIFY" verify "$S" -- "${ARGS[@]}"; exit $?; fi
     export CORPUS_CHECK_DIR="$WORK/check"
     timeout 300 "$(dirname "$PY")/torchrun" --standalone --nproc_per_node=2 "$S" "${ARGS[@]}"; rc=$?
     echo "[run] torchrun exit $rc"; "$PY" "$CHECK_RANKS" "$CORPUS_CHECK_DIR" --label "$NAME (follow)"
     [ -n "${SHOW_FILES:-}" ] && (for f in $SHOW_FILES; do ls -la $f 2>&1; done)
     [ -n "${CKPTS:-}" ] && "$PY" "$RUN_DIR/ckpt_keys.py" $CKPTS
     exit $rc ;;
  verify) convert >/dev/null 2>&1 || { echo "[run] conversion failed"; exit 3; }
     timeout 500 "$DDPIFY" verify "$D" -- "${ARGS[@]}" ;;
esac
