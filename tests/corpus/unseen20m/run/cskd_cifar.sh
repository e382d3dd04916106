#!/usr/bin/env bash
# alinlab/cs-kd train.py (class-wise self-knowledge distillation; datasets.py, models/, utils.py): a module-level
# script; argparse at import; load_dataset (datasets.py) with --cls: trainset / valset wrapped in DatasetWrapper and a
# train DataLoader with batch_sampler=PairBatchSampler (a custom BATCH sampler in the sibling module: random.shuffle of
# the indices (python random, never seeded) and, for each of the batch_size rows, one more row of the same class drawn
# with random.choice: every batch is 2 x batch_size rows); val loader BatchSampler(SequentialSampler); num_workers 4;
# the model from models.load_model(name) (a globals() dict lookup); torch.cuda.set_device(--sgpu) + .cuda() when CUDA;
# DataParallel only when --ngpu > 1; SGD; logdir made by utils.set_logging_defaults (exists test: an existing folder
# PROMPTS with input() and raises unless 'Y'; else makedirs) with a root logger (FileHandler log.txt + stdout); per
# step: the first half of the batch through net (trained), the second half through net under no_grad (the class-wise
# targets), KDLoss (an nn.Module) on the two, backward, step; utils.progress_bar (terminal width read at import with
# `stty size`); per epoch val over the whole val set, 'val' logger line, ckpt.t7 (net + optimizer state, acc, epoch,
# rng_state) saved on a better val accuracy; manual lr decay.
# Data: CIFAR-10 stand-in SHIM_N=32 (every class present; 2 steps of 16+16 rows an epoch; val 16). `stty` from run/bin (no tty here).
# Run: --model CIFAR_ResNet10 --dataset cifar10 --cls --batch-size 16 --epoch 2.
NAME=cskd_cifar REPO=cs-kd SCRIPT=train.py
ARGS=(--model CIFAR_ResNet10 --dataset cifar10 --dataroot ./data --saveroot ./results --name tiny --batch-size 16 --epoch 2 --cls)
export SHIM_N=32
setup() { export PATH="$RUN_DIR/bin:$PATH"; }
SHOW_FILES="results/cifar10/CIFAR_ResNet10/tiny/*"; CKPTS="results/cifar10/CIFAR_ResNet10/tiny/ckpt.t7"
AFTER='wc -l results/cifar10/CIFAR_ResNet10/tiny/log.txt'
source "$(dirname "$0")/_common.sh"
