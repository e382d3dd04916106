#!/usr/bin/env bash
# meliketoy/wide-resnet.pytorch main.py: a module-level script; epochs / batch size / lr schedule from config.py
# (start_epoch 1, num_epochs 200, batch_size 128: constants); CIFAR10 train (shuffle) / test loaders; the network from
# an if/elif chain (getNetwork: lenet / vggnet / resnet / wide-resnet) + net.apply(conv_init); DataParallel(range(n))
# + cudnn when CUDA; train(epoch) builds a NEW SGD every epoch (lr from cf.learning_rate); test(epoch): whole test set,
# best_acc -> state {'net': net.module if use_cuda else net (the whole module object), acc, epoch} into
# checkpoint/<dataset>/<file_name>.t7 after os.mkdir-if-not-isdir of both folders; no seed.
# Run: --net_type lenet (200 epochs as config.py says: one batch an epoch here). CIFAR10 stand-in 16 train / 8 test.
NAME=wrn_main REPO=wide-resnet.pytorch SCRIPT=main.py
ARGS=(--net_type lenet --dataset cifar10 --lr 0.05)
export SHIM_N=16
SHOW_FILES="checkpoint/cifar10/*"; CKPTS="checkpoint/cifar10/lenet.t7"
source "$(dirname "$0")/_common.sh"
