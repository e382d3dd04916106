#!/usr/bin/env bash
# LMescheder/GAN_stability train.py: CIFAR10 (data.type cifar10) replaced by 64 random 32x32 images (shim); a tiny
# config written by setup (configs/tiny.yaml over configs/default.yaml: resnet G/D with nfilter 8, z dim 16, 10 labels,
# batch 8, rmsprop, R1 'real' regularizer, model average on, tensorboard monitoring through the tensorboardX stand-in,
# samples every 4 iterations, backup every 6). The loop is `while True`: the script's only way out is exit(3) once
# restart_every (6 s) has passed, checked when save_every (1 s) has passed - so the original exits 3 after ~6 s and the
# number of iterations depends on the clock. yaml.load(f) without Loader: CORPUS_OLD_YAML=1 (PyYAML 5 behaviour).
NAME=ganstab_train REPO=GAN_stability SCRIPT=train.py
ARGS=(configs/tiny.yaml)
export SHIM_N=64 CORPUS_OLD_YAML=1
setup() {
  cat > configs/tiny.yaml <<'YAML'
data:
  type: cifar10
  train_dir: data/cifar10
  img_size: 32
  nlabels: 10
generator:
  name: resnet
  kwargs: {nfilter: 8, nfilter_max: 32, embed_size: 16}
discriminator:
  name: resnet
  kwargs: {nfilter: 8, nfilter_max: 32, embed_size: 16}
z_dist:
  type: gauss
  dim: 16
training:
  out_dir: output/tiny
  batch_size: 8
  nworkers: 0
  monitoring: tensorboard
  sample_every: 4
  sample_nlabels: 2
  inception_every: -1
  save_every: 1
  backup_every: 6
  restart_every: 6
YAML
}
SHOW_FILES="output/tiny output/tiny/chkpts output/tiny/imgs/all"; CKPTS="output/tiny/chkpts/*.pt"
source "$(dirname "$0")/_common.sh"
