#!/usr/bin/env bash
# hongyi-zhang/Fixup cifar/cifar_train.py: a module-level script; seeds torch/numpy/random from --seed; batch size and
# base lr scaled by torch.cuda.device_count() when CUDA ("batch size per GPU" for nn.DataParallel); CIFAR10 train loader
# (shuffle) and test loader; the model from models.__dict__[args.arch] (a dict lookup); results/ made after an exists
# test; DataParallel when CUDA; a mixup soft-target criterion lambda with torch.zeros(pred.size()).cuda(); SGD with three
# param groups (bias / scale / others); train(): mixup_data (utils.py, np.random.beta per batch), returns
# train_loss/batch_idx; test(): whole test set, best_acc -> checkpoint(): {'net': net (the whole module object), acc,
# epoch, rng_state} into checkpoint/ (os.mkdir after isdir); a csv log row per epoch; utils.py runs `stty size` at
# import and draws a progress bar.
# Run: fixup_resnet20, 2 epochs, batch 8, CIFAR10 stand-in 32 train / 16 test. `stty` on PATH prints a terminal size
# (run/bin/stty: there is no tty here; the original needs one).
NAME=fixup_cifar REPO=Fixup SUBDIR=cifar SCRIPT=cifar_train.py
ARGS=(-a fixup_resnet20 --n_epoch 2 --batchsize 8 --sess tiny --seed 0 --base_lr 0.05)
export SHIM_N=32 PATH="$(cd "$(dirname "$0")" && pwd)/bin:$PATH"
SHOW_FILES="checkpoint/* results/*"; CKPTS="checkpoint/fixup_resnet20_tiny_0.ckpt"
source "$(dirname "$0")/_common.sh"
