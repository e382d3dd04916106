#!/usr/bin/env bash
# hendrycks/outlier-exposure CIFAR/baseline.py (CIFAR/models/wrn.py, models/allconv.py, utils/validation_dataset.py): a
# module-level script; argparse (positional dataset cifar10|cifar100 choosing the dataset pair in an if/else); torch /
# numpy seeded 1 on every rank; --calibration holds out the last 10% (validation_split, sibling utils/, an ordered
# split) - not used here; train loader (shuffle) and test loader (not shuffled, --test_bs); the model from an if/else on
# --model (allconv | wrn: wrn here); --load resume scans <load>/..._epoch_<i>.pt from 999 down; DataParallel when
# --ngpu > 1, .cuda() when --ngpu > 0; SGD nesterov; LambdaLR cosine over args.epochs * len(train_loader) STEPS
# (scheduler.step() per batch, before optimizer.step); train() and test() read globals and write into the module
# dict `state` (train_loss an EMA of the last batches; test loss / accuracy over the whole test set); --test exits after
# test(); the save folder made after an exists test (makedirs), a results CSV opened 'w' then appended per epoch; every
# epoch torch.save(net.state_dict()) to <save>/<dataset>_<model>_baseline_epoch_<e>.pt and os.remove of epoch e-1's
# file after an exists test.
# Data: CIFAR-10 stand-in SHIM_N=96 (train 96 = 6 steps of 16 an epoch; test 96 in batches of 32).
# Run: cifar10 --model wrn --layers 10 --widen-factor 1 --droprate 0 --epochs 3 --batch_size 16 --test_bs 32 --prefetch 0
# --save ./snapshots/tiny
NAME=oe_baseline REPO=outlier-exposure SUBDIR=CIFAR SCRIPT=baseline.py
ARGS=(cifar10 --model wrn --layers 10 --widen-factor 1 --droprate 0 --epochs 3 --batch_size 16 --test_bs 32 --prefetch 0 --save ./snapshots/tiny)
export SHIM_N=96
SHOW_FILES="snapshots/tiny/*"; CKPTS="snapshots/tiny/cifar10_wrn_baseline_epoch_2.pt"
source "$(dirname "$0")/_common.sh"
