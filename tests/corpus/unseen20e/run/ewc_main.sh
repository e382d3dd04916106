#!/usr/bin/env bash
# kuc2477/pytorch-ewc main.py: MNIST replaced by 64 train / 32 test random images (shim), 2 permuted-MNIST tasks; MLP
# (model.py) built in main.py and trained by train.train() of the sibling module train.py: a new DataLoader per epoch
# from utils.get_data_loader, model.ewc_loss() each step, utils.validate (its own loader) every 2 iterations, and after
# each task but the last model.consolidate(model.estimate_fisher(...)) registers per-parameter mean/fisher buffers;
# visdom stand-in. --consolidate, 2 tasks x 2 epochs, batch 16, hidden 32, fisher sample 32, test size 32.
NAME=ewc_main REPO=pytorch-ewc SCRIPT=main.py
ARGS=(--task-number 2 --epochs-per-task 2 --batch-size 16 --hidden-size 32 --fisher-estimation-sample-size 32
      --test-size 32 --eval-log-interval 2 --loss-log-interval 2 --consolidate)
export SHIM_N=64
source "$(dirname "$0")/_common.sh"
