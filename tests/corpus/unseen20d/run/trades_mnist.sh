#!/usr/bin/env bash
# yaodongyu/TRADES train_trades_mnist.py: MNIST replaced by 32 train / 16 test random 28x28 images (shim), SmallCNN,
# trades_loss (trades.py: 40-step PGD with torch.autograd.grad w.r.t. the input, model.eval()/train() inside the loss),
# 2 epochs of batch 8, a checkpoint every epoch (--save-freq 1). --num-steps has no type= (a string if passed): default 40 kept.
NAME=trades_mnist REPO=TRADES SCRIPT=train_trades_mnist.py
ARGS=(--epochs 2 --batch-size 8 --test-batch-size 8 --save-freq 1 --log-interval 2 --model-dir ./model-t)
export SHIM_N=32
SHOW_FILES="model-t"; CKPTS="model-t/*.pt"
source "$(dirname "$0")/_common.sh"
