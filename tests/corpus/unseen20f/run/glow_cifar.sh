#!/usr/bin/env bash
# chrischute/glow train.py: CIFAR10 replaced by 32 train / 16 test random 32x32 images (shim); Glow with ActNorm
# (data-dependent init of bias/logs on the first training batch, models/glow/act_norm.py), batch size multiplied by
# len(gpu_ids) (line 25), DataParallel only when device == 'cuda' (CPU here), LambdaLR warm-up stepped with a global_step
# that counts SAMPLES (global_step += x.size(0)), best-loss checkpoint (best_loss starts at 0: never saved), samples written
# every epoch with torchvision.utils.save_image (shim writes a file). 2 epochs, batch 8, C=8, L=2, K=2.
NAME=glow_cifar REPO=glow SCRIPT=train.py
ARGS=(--batch_size 8 --num_channels 8 --num_levels 2 --num_steps 2 --num_epochs 2 --num_samples 4 --num_workers 0
      --warm_up 64 --seed 0)
export SHIM_N=32
SHOW_FILES="samples/* ckpts/*"; CKPTS="ckpts/*.tar"
source "$(dirname "$0")/_common.sh"
