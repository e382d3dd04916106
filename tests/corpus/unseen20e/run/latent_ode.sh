#!/usr/bin/env bash
# rtqichen/torchdiffeq examples/latent_ode.py: 1000 toy spirals generated in the script (numpy.random, unseeded);
# three modules (LatentODEfunc, RecognitionRNN sized by nbatch=nspiral=1000, Decoder) trained by one Adam over their
# concatenated parameters, full batch of all 1000 spirals each iteration, rec.forward(obs, h) called explicitly 100
# times per iteration from rec.initHidden(); --train_dir makes the dir (the checkpoint is written only on Ctrl-C);
# --visualize True: the post-training plot (matplotlib stand-in). 4 iterations, torchdiffeq from the repo root.
NAME=latent_ode REPO=torchdiffeq SUBDIR=examples SCRIPT=latent_ode.py
ARGS=(--niters 4 --train_dir ckpt --visualize True)
setup() { export PYTHONPATH="$PYTHONPATH:$(cd .. && pwd)"; }
SHOW_FILES="ckpt"
source "$(dirname "$0")/_common.sh"
