#!/usr/bin/env bash
# Convert a bundled single-GPU example and train it under torchrun with 2 CPU processes.
source "$(dirname "$0")/env.sh"
cd "$ROOT"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/ddpify-demo.XXXXXX")"
echo "+ ddpify examples/cnn_classifier/train.py -o $OUT/train_ddp.py"
ddpify examples/cnn_classifier/train.py -o "$OUT/train_ddp.py"
echo "+ torchrun --standalone --nproc_per_node=2 $OUT/train_ddp.py --epochs 3 --out-dir $OUT"
CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 \
  torchrun --standalone --nproc_per_node=2 "$OUT/train_ddp.py" --epochs 3 --out-dir "$OUT"
echo "checkpoints written by rank 0 in $OUT:" $(cd "$OUT" && ls *.pt)
