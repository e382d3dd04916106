#!/usr/bin/env bash
# aaron-xichen/pytorch-playground mnist/train.py (repo root on the path for utee/): a module-level script; argparse;
# misc.logger.init (a root logger with a FileHandler in the log dir, an old log file removed first) and
# `print = misc.logger.info` (every print goes to the log file); misc.auto_select_gpu(selected_gpus=--gpu) sets
# CUDA_VISIBLE_DEVICES to the given index in every process; misc.ensure_dir; torch.manual_seed; loaders from the sibling
# dataset.py (dataset.get: MNIST, train shuffle, TEST ALSO shuffle); the MLP (model.py) wrapped in nn.DataParallel
# (device_ids=range(ngpu)) then .cuda(); SGD; per epoch a manual lr decay, the step loop inside try/except Exception
# (any error is printed and swallowed; finally prints the best result), model_snapshot of latest.pth each epoch
# (misc.py unwraps DataParallel only), every test_interval epochs a whole-test-set evaluation, best-{epoch}.pth on a
# better accuracy with the previous best file REMOVED (model_snapshot old_file).
# Data: MNIST stand-in SHIM_N=64 (4 train steps of 16 an epoch; test 32).
# Run: --batch_size 16 --epochs 3 --test_interval 1 --log_interval 2 --gpu 0.
NAME=playground_mnist REPO=pytorch-playground SUBDIR=mnist SCRIPT=train.py EXTRA_SHIM=..
ARGS=(--batch_size 16 --epochs 3 --test_interval 1 --log_interval 2 --gpu 0 --logdir log/tiny --data_root ./data)
export SHIM_N=64
SHOW_FILES="log/tiny/*"; CKPTS="log/tiny/latest.pth"
source "$(dirname "$0")/_common.sh"
