# Sourced by run/<name>.sh. Copies the fetched repo folder ($REPO under $CORPUS, default /work/corpus-unseen20)
# to a scratch dir, puts offline stubs (shim/) and the corpus check shim on PYTHONPATH, then runs:
#   MODE=orig   python SCRIPT ARGS                     (the original, one process)
#   MODE=ddp    torchrun --standalone --nproc_per_node=2 SCRIPT_ddp ARGS   + check_ranks
#   MODE=verify ddpify verify SCRIPT_ddp -- ARGS
set -euo pipefail
RUN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$RUN_DIR/../../../.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
CORPUS="${CORPUS:-/work/corpus-unseen20}"
MODE="${MODE:-ddp}"
WORK="$(mktemp -d /tmp/unseen20_${NAME}.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "[run] $WORK" >&2 || trap 'rm -rf "$WORK"' EXIT
cp -r "$CORPUS/$REPO/." "$WORK/"
cd "$WORK"
export PYTHONPATH="$RUN_DIR/shim:$ROOT/tests/corpus/run/shim:$CORPUS/_deps:$WORK"
export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 MPLBACKEND=Agg PYTHONWARNINGS=ignore CORPUS_CHECK_DIR="$WORK/check"
ulimit -v 4000000
go() {  # go SCRIPT ARGS...
  local s="$1"; shift
  case "$MODE" in
    orig) timeout 300 "$PY" "$s" "$@" ;;
    ddp) timeout 300 "$ROOT/.venv/bin/torchrun" --standalone --nproc_per_node=2 "${s%.py}_ddp.py" "$@"; rc=$?
         "$PY" "$ROOT/tests/corpus/run/check_ranks.py" "$CORPUS_CHECK_DIR" --label "$NAME"; return $rc ;;
    verify) timeout 400 "$ROOT/.venv/bin/ddpify" verify "${s%.py}_ddp.py" -- "$@" ;;
  esac
}
