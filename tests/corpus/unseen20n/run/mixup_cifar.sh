#!/usr/bin/env bash
# facebookresearch/mixup-cifar10 train.py (models/, utils.py): a module-level script; argparse at import;
# torch.manual_seed(--seed) when --seed != 0 (every rank the same init and the same loader order); CIFAR-10 train loader
# (shuffle, num_workers 8) and test loader (batch 100, not shuffled); the model from models.__dict__[--model] (a dict
# lookup by name) or, with --resume, the WHOLE pickled module from the checkpoint; results/ folder (exists test + mkdir)
# and a CSV log name from the model's class name; .cuda() + nn.DataParallel when CUDA; SGD; train(epoch): mixup_data
# (np.random.beta lambda, torch.randperm(x.size(0)) sized from the batch), mixup loss, loss.data[0] sums,
# progress_bar (stty at import); test(epoch) over the whole test loader, checkpoint() on the last epoch or a better
# accuracy: torch.save({'net': net (the WHOLE module object, DataParallel-wrapped under CUDA), 'acc', 'epoch',
# 'rng_state'}) after an exists test + mkdir of checkpoint/; manual lr steps; the CSV header written if absent and a row
# appended every epoch.
# Data: CIFAR-10 stand-in SHIM_N=256 (16 steps of 16 an epoch), test 128 (2 batches of 100: test() divides by batch_idx).
# Run: --model LeNet --batch-size 16 --epoch 2 --seed 1 --name tiny --lr 0.01 (LeNet: the ResNet18 default costs minutes
# on CPU). CORPUS_ZERO_DIM_INDEX=1 (loss.data[0]).
NAME=mixup_cifar REPO=mixup-cifar10 SCRIPT=train.py
ARGS=(--model LeNet --batch-size 16 --epoch 2 --seed 1 --name tiny --lr 0.01)
export SHIM_N=256 CORPUS_ZERO_DIM_INDEX=1
SHOW_FILES="checkpoint/* results/*"; CKPTS="checkpoint/ckpt.t7tiny_1"
setup() { export PATH="$RUN_DIR/bin:$PATH"; }
source "$(dirname "$0")/_common.sh"
