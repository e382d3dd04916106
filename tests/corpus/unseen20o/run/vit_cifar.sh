#!/usr/bin/env bash
# kentaroy47/vision-transformers-cifar10 train_cifar10.py (models/, utils.py, randomaug.py): a module-level script;
# argparse; `usewandb = ~args.nowandb` (bitwise NOT of a bool: -1 or -2, ALWAYS true) -> wandb.init + config.update at
# module level (every rank unless converted), wandb.watch, wandb.log per epoch, wandb.save at the end; NO seed anywhere;
# CIFAR-10 train loader (shuffle, num_workers 8, batch --bs) and test loader (batch 100, not shuffled); the model from a
# 17-way if/elif chain on --net (vit_tiny here: models/vit_small.ViT with dropout); nn.DataParallel only under CUDA with
# --dp; --resume loads ./checkpoint/<net>-<dataset>-<patch>-ckpt.t7 ('net' state dict); Adam; CosineAnnealingLR stepped
# with scheduler.step(epoch-1); GradScaler(enabled=use_amp) + autocast (cuda amp, inert on CPU); train(epoch): forward
# under autocast, scaler.scale(loss).backward(), scaler.step, update, zero_grad, progress_bar (stty at import);
# test(epoch) over the whole test loader, global best_acc: on a better acc saves {net state dict, optimizer, scaler,
# acc, epoch} after an isdir test + os.mkdir('checkpoint'); makedirs('log', exist_ok) and a line APPENDED to
# log/log_<net>_<dataset>_patch<p>.txt every epoch; net.cuda() just before the loop; the CSV of val losses / accs
# rewritten every epoch.
# Data: CIFAR-10 stand-in SHIM_N=128 (8 steps of 16 an epoch), test 64 (one batch of 100 holds it all).
# Run: --net vit_tiny --dimhead 32 --patch 8 --bs 16 --n_epochs 2 --noaug --lr 1e-3 (wandb stand-in on: ~args.nowandb).
# einops 0.8.1 from /work/corpus-unseen20o/_deps (EXTRA_SHIM; pip install --no-deps --target). stty from run/bin.
NAME=vit_cifar REPO=vision-transformers-cifar10 SCRIPT=train_cifar10.py
ARGS=(--net vit_tiny --dimhead 32 --patch 8 --bs 16 --n_epochs 2 --noaug --lr 1e-3)
export SHIM_N=128 EXTRA_SHIM=/work/corpus-unseen20o/_deps
SHOW_FILES="checkpoint/* log/*"; CKPTS="checkpoint/vit_tiny-cifar10-8-ckpt.t7"
setup() { export PATH="$RUN_DIR/bin:$PATH"; }
source "$(dirname "$0")/_common.sh"
