#!/usr/bin/env bash
# timbmg/VAE-CVAE-MNIST train.py: MNIST replaced by 64 random 28x28 images (shim, ToTensor to [0,1]), conditional VAE
# (--conditional: vae(x, y), vae.inference(z, c=c) for the figures), matplotlib/seaborn/pandas stand-ins (no figure
# file is written; figs/<time.time()> directories are), 2 epochs of batch 16, figures every 2 steps.
NAME=cvae_train REPO=VAE-CVAE-MNIST SCRIPT=train.py
ARGS=(--epochs 2 --batch_size 16 --print_every 2 --conditional)
export SHIM_N=64
SHOW_FILES="figs"
source "$(dirname "$0")/_common.sh"
