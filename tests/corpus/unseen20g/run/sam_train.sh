#!/usr/bin/env bash
# davda54/sam example/train.py: a module-level script; the SAM optimizer (../sam.py, reached by sys.path.append("..")) is
# a torch.optim.Optimizer that builds its base optimizer (SGD) over its own param_groups; each step runs TWO
# forward-backward passes: first_step() moves the weights by rho * grad / ||grad|| (a global gradient norm) and
# second_step() restores them and steps the base optimizer; BatchNorm momentum is switched off for the second pass
# (utility/bypass_bn.py); the loaders come from data/cifar.py's Cifar class (whose _get_statistics iterates the whole
# training set through a DataLoader for the normalisation mean/std), a StepLR helper (utility/step_lr.py) sets the lr from
# the epoch every batch, utility/log.py's Log prints progress, per-epoch loss/accuracy and keeps best_accuracy; the
# device is "cuda:0" when CUDA; initialize() seeds python/torch with 42. Data: CIFAR10 stand-in (32 train / 16 test
# random images). 2 epochs, batch 8, WRN-10-1.
NAME=sam_train REPO=sam SUBDIR=example SCRIPT=train.py
ARGS=(--depth 10 --width_factor 1 --epochs 2 --batch_size 8 --threads 0)
export SHIM_N=32
source "$(dirname "$0")/_common.sh"
