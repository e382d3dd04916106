#!/usr/bin/env bash
# znxlwm/pytorch-MNIST-CelebA-cGAN-cDCGAN pytorch_MNIST_cGAN.py: a MODULE-LEVEL conditional GAN, no CLI, no functions
# around the loop; MLP generator / discriminator classes in the file with weight_init methods; AT MODULE LEVEL the fixed
# noise / labels for the sample grid (torch.rand unseeded, .cuda(), Variable(volatile=True)); batch_size = 128,
# train_epoch = 50 and the LR drops at epochs 30 / 40 are constants; MNIST DataLoader shuffle=True; G.cuda(), D.cuda();
# torch UNSEEDED; per batch: targets / one-hot labels sized by the batch (mini_batch = x_.size()[0]), the D step's
# loss goes through a NON-detached G(z) (D_train_loss.backward() also fills G's grads; G.zero_grad() clears them later),
# then the G step (a second G forward, through D); losses stored with .data[0]; per epoch show_result() (a G forward in
# eval mode on the fixed noise, matplotlib grid, plt.savefig of Fixed_results/MNIST_cGAN_<epoch>.png); at the end
# torch.save of G / D state dicts, a pickle of train_hist, the history plot and imageio.mimsave of a gif built by
# reading back every epoch's PNG.
# Data: MNIST stand-in SHIM_N=256 (2 batches of 128 an epoch in one process). matplotlib / imageio stand-ins (run/shim:
# savefig writes a numpy-saved array that imageio.imread reads back).
# Run: no arguments (50 epochs).
NAME=cgan REPO=pytorch-MNIST-CelebA-cGAN-cDCGAN SCRIPT=pytorch_MNIST_cGAN.py
ARGS=()
export SHIM_N=256 CORPUS_ZERO_DIM_INDEX=item
SHOW_FILES="MNIST_cGAN_results"; CKPTS="MNIST_cGAN_results/*.pkl"
source "$(dirname "$0")/_common.sh"
