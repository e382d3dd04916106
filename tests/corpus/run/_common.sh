# Sourced by run/<name>.sh. Scratch directory, shims, per-rank checks.
#   PYTHON   python to use (default /work/main/.venv/bin/python)
#   RUNNER   command that launches the script (default "$PYTHON"; e.g. "torchrun --standalone --nproc_per_node=2")
#   SCRIPT   script to run (default $CORPUS_SCRIPTS/$NAME.py; point it at <name>_ddp.py for the converted one)
#   CORPUS_SCRIPTS  folder of the fetched scripts (default /work/corpus-new); SUPPORT: its support/ folder
#                   holding the scripts' own helper modules, fetched at the same commit (never committed)
#   KEEP=1   keep the scratch directory
# After the run, check_ranks.py prints disjointness of the ranks' data and parameter equality.
set -euo pipefail
RUN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-/work/main/.venv/bin/python}"
RUNNER="${RUNNER:-$PYTHON}"
CORPUS_SCRIPTS="${CORPUS_SCRIPTS:-/work/corpus-new}"
SUPPORT="${SUPPORT:-$CORPUS_SCRIPTS/support}"
SCRIPT="$(realpath "${SCRIPT:-$CORPUS_SCRIPTS/$NAME.py}")"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/corpus11_${NAME}.XXXXXX")"
if [ "${KEEP:-0}" = "1" ]; then echo "[run] scratch dir: $WORK" >&2; else trap 'rm -rf "$WORK"' EXIT; fi
cd "$WORK"
export PYTHONPATH="$RUN_DIR/shim:$WORK${EXTRA_PYTHONPATH:+:$EXTRA_PYTHONPATH}${PYTHONPATH:+:$PYTHONPATH}"
export CUDA_VISIBLE_DEVICES=""
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export MPLBACKEND=Agg
export PYTHONWARNINGS="${PYTHONWARNINGS:-ignore}"
export CORPUS_CHECK_DIR="$WORK/check"
ulimit -v "${MEM_LIMIT_KB:-3000000}"   # a runaway allocation fails fast instead of taking the machine
check() { "$PYTHON" "$RUN_DIR/check_ranks.py" "$CORPUS_CHECK_DIR" --label "$NAME $(basename "$SCRIPT")"; }
