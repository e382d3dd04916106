#!/usr/bin/env bash
# ozanciga/gans-with-pytorch ct-gan/ct_gan.py (ct-gan/models.py): a MODULE-LEVEL script (no main): argparse, visdom
# opened at import (raise_exceptions=True; the stand-in here returns a no-op object, so vis is set), CIFAR10 through
# torchvision datasets (the offline stand-in: SHIM_N random 32x32x3 images) in ONE DataLoader(shuffle=True); torch
# UNSEEDED (the models' init differs per process); a Generator / Discriminator pair from the sibling models.py, two
# Adam optimizers; `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor` builds every batch-sized tensor
# (noise, epsilon, grad_outputs) with Tensor(batch.size(0), ...); the critic is called FIVE times per critic step
# (x_hat for the gradient penalty via autograd.grad(create_graph=True), x_tilde, x, and twice x with dropout=0.5 /
# intermediate_output=True keyword arguments) and stepped n_critic times on the SAME batch; x_tilde =
# Variable(generator(noise), requires_grad=True) (generator output re-wrapped); the generator step goes through the
# critic; every sample_interval batches vis.line / vis.images with generator(noise_fixed) (noise_fixed drawn once,
# at import, from the unseeded stream). No checkpoint is saved.
# Run: --n_epochs 2 --batch_size 8 --n_critic 2 --sample_interval 2 (SHIM_N=32: 4 batches per epoch in one process)
NAME=ctgan REPO=gans-with-pytorch SUBDIR=ct-gan SCRIPT=ct_gan.py
ARGS=(--n_epochs 2 --batch_size 8 --n_critic 2 --sample_interval 2)
export SHIM_N=32
source "$(dirname "$0")/_common.sh"
