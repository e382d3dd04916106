#!/usr/bin/env bash
# CuthbertCai/pytorch_DANN main.py (train/{params,train,test}.py, models/models.py, util/utils.py): THREE models -
# feature_extractor, class_classifier, domain_classifier - are INSTANTIATED AT IMPORT of the sibling config module
# train/params.py, in dicts keyed by 'SOURCE_TARGET' (extractor_dict / class_dict / domain_dict), and main() picks them
# by key; params.use_gpu = True (a module constant) drives `.cuda()` on models and batches; ONE SGD over the three
# models as three param groups; the loaders come from util/utils.get_train_loader / get_test_loader (batch_size =
# params.batch_size = 512, a module constant; shuffle=True for train, batch 1 / shuffle=False for test); the epoch loop
# calls train.train(...) in the SIBLING module train/train.py, which iterates zip(source_loader, target_loader) (the
# shorter one ends the epoch), sets the LR by hand per step (utils.optimizer_scheduler), and runs feature_extractor
# TWICE (source, target) and domain_classifier TWICE (with a gradient-reversal constant) before ONE backward of the
# summed loss; Dropout2d / F.dropout in the models; test.test(...) evaluates both test loaders and prints
# accuracies; torch UNSEEDED; no checkpoint is saved.
# Run: --source_domain MNIST --target_domain MNIST_M --training_mode dann --max_epoch 2 (SHIM_N=1100: MNIST stand-in
#      1100 train / 550 test images, MNIST_M ImageFolder stand-in 1100 images (train and test): 3 batches (512, 512, 76) per loader per epoch in one process)
NAME=dann REPO=pytorch_DANN SCRIPT=main.py
ARGS=(--source_domain MNIST --target_domain MNIST_M --training_mode dann --max_epoch 2)
export SHIM_N=1100
source "$(dirname "$0")/_common.sh"
