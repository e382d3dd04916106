#!/usr/bin/env bash
# znxlwm/pytorch-generative-model-collections main.py --gan_type ACGAN: MNIST replaced by 32 random 28x28 images
# (shim), scipy.misc.imsave stand-in (shim_scipy), 2 epochs of batch 8, CPU (--gpu_mode '').
NAME=acgan_main REPO=pytorch-generative-model-collections SCRIPT=main.py
ARGS=(--gan_type ACGAN --dataset mnist --epoch 2 --batch_size 8 --input_size 28 --gpu_mode "" --benchmark_mode "")
export SHIM_N=32 SHIM_IMG=28
EXTRA_SHIM="$(cd "$(dirname "$0")" && pwd)/shim_scipy"
SHOW_FILES="models/mnist/ACGAN results/mnist/ACGAN"; CKPTS="models/mnist/ACGAN/*.pkl"
FOLLOW="${FOLLOW-ACGAN.py dataloader.py}"
source "$(dirname "$0")/_common.sh"
