#!/usr/bin/env bash
# rtqichen/torchdiffeq examples/odenet_mnist.py: MNIST replaced by 64 train / 32 test random 28x28 images (shim); the
# model is an nn.Sequential with an ODEBlock (torchdiffeq.odeint, the package at the repo root put on PYTHONPATH by
# setup); loaders from get_mnist_loaders (3 loaders, num_workers=2), training over inf_generator(train_loader) for
# nepochs * len(train_loader) iterations, lr from learning_rate_with_decay (scaled by batch_size/128), accuracy on
# train_eval_loader and test_loader every epoch, best model.pth; logging to <save>/logs. 2 epochs of batch 16, tol 0.1.
NAME=odenet_mnist REPO=torchdiffeq SUBDIR=examples SCRIPT=odenet_mnist.py
ARGS=(--network odenet --nepochs 2 --batch_size 16 --test_batch_size 16 --tol 0.1 --data_aug True --save exp)
export SHIM_N=64
setup() { export PYTHONPATH="$PYTHONPATH:$(cd .. && pwd)"; }
SHOW_FILES="exp"; CKPTS="exp/model.pth"
source "$(dirname "$0")/_common.sh"
