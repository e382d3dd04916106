#!/usr/bin/env bash
# ritheshkumar95/generative-models wgan-gp.py (modules.py, data.py) at 0d8aa7e: a MODULE-LEVEL script; the data come
# from an INFINITE GENERATOR built in the sibling data.py (inf_train_gen: a DataLoader over eval('datasets.%s' %
# dataset) with batch_size=64 HARD-CODED, no shuffle, drop_last=True, wrapped in `while True: for img, _ in loader:
# yield img`; the script's --batch_size is NOT the loader's batch - it sizes the noise z); a SECOND generator is built
# only to dump one original batch (save_image); Generator / Discriminator from modules.py with `.cuda()`; two Adam
# (amsgrad); constants one / mone on .cuda(); per iteration ONE generator step (D_fake.backward(mone) through the
# critic: D's grads accumulate too and are zeroed later) and critic_iters critic steps, each with THREE separate
# backward calls before one optimizer step (D_real.backward(mone), D_fake.backward(one) on netG(z).detach() - a
# generator forward with grad and no backward - and the gradient penalty: calc_gradient_penalty runs netD on the
# interpolates and autograd.grad(create_graph=True) w.r.t. the INPUT, then .backward()); torch UNSEEDED; every 500
# iterations (hard-coded) a print, sample(netG) -> save_image('samples/...') and torch.save(netG.state_dict(),
# 'models/wgan-gp_<dataset>.pt'). samples/ and models/ are not in the repository (setup() makes them, as the author's
# checkout had them).
# Run: --dataset MNIST --iters 500 --critic_iters 2 --dim 4 --z_dim 16 --batch_size 64 (SHIM_N=256 MNIST stand-in
#      images 28x28x1: 4 loader batches per pass in one process)
NAME=gm_wgangp REPO=generative-models SCRIPT=wgan-gp.py
ARGS=(--dataset MNIST --iters 500 --critic_iters 2 --dim 4 --z_dim 16 --batch_size 64)
export SHIM_N=256
SHOW_FILES="samples samples/* models/*"; CKPTS="models/wgan-gp_MNIST.pt"
setup() { mkdir -p samples models; }
source "$(dirname "$0")/_common.sh"
