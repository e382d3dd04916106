#!/usr/bin/env bash
# ermongroup/ncsn main.py -> runners/anneal_runner.py AnnealRunner (a sibling package, chosen by NAME through
# eval(args.runner), main.py:116): train() builds the loaders, the tensorboardX writer (after rmtree of its folder), the
# CondRefineNetDilated score network wrapped in nn.DataParallel, the optimizer (get_optimizer: if/elif on config), and trains:
# noise levels drawn per sample (torch.randint sized by X.shape[0]), return at n_iters, a test batch every 100 steps from an
# iterator restarted on StopIteration, checkpoints [score.state_dict(), optimizer.state_dict()] every snapshot_freq steps
# (DataParallel 'module.' keys). main.py rmtree's and re-creates run/logs/<doc> and writes config.yml there, logs to a file,
# seeds torch and numpy, and SWALLOWS every exception of runner.train() (logging.error, exit 0). MNIST replaced by 64 random
# 28x28 images (shim); a tiny config written by setup() (ngf 8, batch 8, n_iters 10, snapshot_freq 5). yaml.load(f) without
# Loader: CORPUS_OLD_YAML=1.
NAME=ncsn_anneal REPO=ncsn SCRIPT=main.py
ARGS=(--runner AnnealRunner --config tiny.yml --doc tiny)
export SHIM_N=64 CORPUS_OLD_YAML=1
setup() {
  cat > configs/tiny.yml <<'YAML'
training:
  batch_size: 8
  n_epochs: 500000
  n_iters: 10
  ngpu: 1
  snapshot_freq: 5
  algo: 'dsm'
  anneal_power: 2.0
data:
  dataset: "MNIST"
  image_size: 28
  channels: 1
  logit_transform: false
  random_flip: false
model:
  sigma_begin: 1
  sigma_end: 0.01
  num_classes: 10
  batch_norm: false
  ngf: 8
optim:
  weight_decay: 0.000
  optimizer: "Adam"
  lr: 0.001
  beta1: 0.9
  amsgrad: false
YAML
}
SHOW_FILES="run/logs/tiny/* run/tensorboard"; CKPTS="run/logs/tiny/*.pth"
source "$(dirname "$0")/_common.sh"
