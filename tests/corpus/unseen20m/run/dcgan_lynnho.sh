#!/usr/bin/env bash
# LynnHo/DCGAN-LSGAN-WGAN-GP-DRAGAN-Pytorch train.py (data.py, module.py, pylib/, torchlib/, torchprob/, imlib/): a
# module-level script; pylib args; output_dir made (py.mkdir: exists test + makedirs) and settings.yml written; the
# dataset from an if/elif chain on --dataset (data.make_32x32_dataset: shuffle, drop_last, num_workers 4); G and D
# (module.py) .to(device); d_loss_fn / g_loss_fn from a dict of loss modes (torchprob get_adversarial_losses_fn); two
# Adam optimizers; train_D(x_real): z = torch.randn(args.batch_size, ...) (BATCH-SIZE-SIZED noise, not x_real's rows),
# D(x_real), D(G(z).detach()), gradient_penalty (a third D forward on interpolates real + alpha*(fake - real), which
# needs real and fake of the SAME row count, and torch.autograd.grad w.r.t. the input with create_graph=True), backward,
# step; train_G() every n_d D steps: z of args.batch_size rows, D(G(z)), backward through D into G only, G step;
# resume from the checkpoint folder inside a bare try/except; tensorboardX writer; a fixed z of 100 rows for samples;
# sample images (im.imwrite) whenever it_g % 100 == 0 (true at it_g 0, i.e. on every D step before the first G step);
# per epoch torchlib.save_checkpoint (torch.save, then the 'checkpoint' list file read / rewritten and older files
# REMOVED with max_keep=1).
# Data: Fashion-MNIST stand-in SHIM_N=64 (28x28, resized to 32): 4 D steps of 16 an epoch, 2 G steps.
# Run: --dataset fashion_mnist --batch_size 16 --epochs 2 --z_dim 16 --adversarial_loss_mode wgan
#      --gradient_penalty_mode 1-gp --gradient_penalty_sample_mode line --n_d 2 (the README's WGAN-GP line, scaled down).
NAME=dcgan_lynnho REPO=DCGAN-LSGAN-WGAN-GP-DRAGAN-Pytorch SCRIPT=train.py
ARGS=(--dataset fashion_mnist --batch_size 16 --epochs 2 --z_dim 16 --adversarial_loss_mode wgan
      --gradient_penalty_mode 1-gp --gradient_penalty_sample_mode line --n_d 2 --experiment_name tiny)
export SHIM_N=64
SHOW_FILES="output/tiny/* output/tiny/checkpoints/* output/tiny/samples_training/*"; CKPTS="output/tiny/checkpoints/Epoch_(2).ckpt"
source "$(dirname "$0")/_common.sh"
