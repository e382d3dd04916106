#!/usr/bin/env bash
# lukasruff/Deep-SVDD-PyTorch src/main.py (click CLI): the dataset by name (datasets/main.py load_dataset -> MNIST_Dataset:
# a Subset of the normal class for training, MyMNIST returning (img, target, index), GCN + min-max transforms), the net
# by name (networks/main.py build_network 'mnist_LeNet'); a DeepSVDD object (deepSVDD.py, not an nn.Module) first
# pretrains an autoencoder built by name (build_autoencoder) with AETrainer (optim/ae_trainer.py: its own loaders from
# dataset.loaders(), Adam, MultiStepLR, a test pass with roc_auc_score), copies the encoder weights into the net
# (init_network_weights_from_pretraining, state_dict filter), then DeepSVDDTrainer (optim/deepSVDD_trainer.py) computes the
# hypersphere centre c as the mean net output over the WHOLE train loader (init_center_c) and trains on
# mean ||net(x) - c||^2; test() scores the whole test set (AUC); main() plots the most normal/anomalous test images
# (matplotlib), writes results.json, model.tar (R, c, net_dict, ae_net_dict) and config.json into xp_path, and logs to
# xp_path/log.txt (FileHandler). --lr_milestone/--ae_lr_milestone are given because click 8 rejects their default (0 with multiple=True). Data: MNIST stand-in (48 train rows, ~5 of them class 0; 24 test). 2 + 2 epochs, batch 4.
NAME=deepsvdd_main REPO=Deep-SVDD-PyTorch SUBDIR=src SCRIPT=main.py
ARGS=(mnist mnist_LeNet ../log/tiny ../data --objective one-class --lr 0.0001 --n_epochs 2 --batch_size 2
      --pretrain True --ae_lr 0.0001 --ae_n_epochs 2 --ae_batch_size 2 --normal_class 0 --device cpu --seed 1
      --lr_milestone 50 --ae_lr_milestone 50)
export SHIM_N=48
setup() { mkdir -p ../log/tiny ../data; }
SHOW_FILES="../log/tiny/*"; CKPTS="../log/tiny/model.tar"
source "$(dirname "$0")/_common.sh"
