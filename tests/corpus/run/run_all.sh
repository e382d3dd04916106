#!/usr/bin/env bash
# Run every launcher: the original as one process, then the converted script (<name>_ddp.py, made by
# `ddpify <name>.py -o <name>_ddp.py`) under torchrun with 2 CPU processes (gloo). One [check] line each.
#   CORPUS_SCRIPTS (default /work/corpus-new), EXTRA_PYTHONPATH (gymnasium, tyro, einops), TIMEOUT (s, default 240)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
C="${CORPUS_SCRIPTS:-/work/corpus-new}"
PY="${PYTHON:-/work/main/.venv/bin/python}"
TR="$(dirname "$PY")/torchrun --standalone --nproc_per_node=2"
T="${TIMEOUT:-240}"
one() {  # label, env..., launcher
  local label="$1"; shift
  local out; out="$(mktemp)"
  local launcher="${*: -1}"; local vars=("${@:1:$#-1}")  # env VAR=... timeout T bash LAUNCHER: the timeout applies
  env "${vars[@]}" timeout "$T" bash "$launcher" >"$out" 2>&1; local rc=$?
  local line; line="$(grep '^\[check\]' "$out" | tail -1)"
  local err; err="$(grep -oE '\[rank[0-9]\]: [A-Za-z]*(Error|Exception)(: .{0,120})?' "$out" | tail -1)"
  [ $rc -eq 124 ] && err="TIMEOUT after ${T}s ${err}"
  echo "$label rc=$rc ${line:-no check record} ${err:+| $err}"
  rm -f "$out"
}
for n in ngvl_gpt tanelp_tiny_diffusion pradyu_nanogpt cleanrl_ppo; do
  one "$n original" PYTHON="$PY" "$HERE/$n.sh"
  one "$n converted" PYTHON="$PY" SCRIPT="$C/${n}_ddp.py" RUNNER="$TR" "$HERE/$n.sh"
done
one "tanelp_tiny_diffusion converted --save_images_step 2" PYTHON="$PY" SCRIPT="$C/tanelp_tiny_diffusion_ddp.py" RUNNER="$TR" ARGS="--save_images_step 2" "$HERE/tanelp_tiny_diffusion.sh"
one "mingpt original" PYTHON="$PY" "$HERE/mingpt.sh"
one "mingpt converted" PYTHON="$PY" SCRIPT="$C/mingpt_chargpt_ddp.py" TRAINER="$C/mingpt_trainer_ddp.py" RUNNER="$TR" "$HERE/mingpt.sh"
