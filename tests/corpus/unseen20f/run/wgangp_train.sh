#!/usr/bin/env bash
# jalola/improved-wgan-pytorch train.py: a click command; WGAN-GP with a ResNet generator/critic (models/wgan.py), both in
# nn.DataParallel, two Adam optimizers, noise sized by the configured batch (gen_rand_noise(batch_size)), the gradient
# penalty's alpha and views sized by the configured batch (training_utils.calc_gradient_penalty), requires_grad of D
# toggled off for the G step and on for the critic steps, gen_cost.backward(mone), critic batches from a manual iterator
# (next(dataiter, None); on exhaustion the py2 `dataiter.next()`, which raises on torch 2 - not reached here), a validation
# loader built every saving_step, samples + DataParallel ('module.') state_dicts saved every saving_step, libs.plot
# pickles/plots, tensorboardX (stub). ImageFolder replaced by 128 random 64x64 images (shim); 3 iterations, 2 critic steps,
# batch 8, saving_step 2 (one save at iteration 2).
NAME=wgangp_train REPO=improved-wgan-pytorch SCRIPT=train.py
ARGS=(--train_dir data/train --validation_dir data/val --output_path out --dim 64 --critic_iters 2 --gen_iters 1
      --batch_size 8 --end_iter 3 --saving_step 2 --num_workers 0)
export SHIM_N=128
SHOW_FILES="out/* out/samples/*"; CKPTS="out/*.pt"
source "$(dirname "$0")/_common.sh"
