#!/usr/bin/env bash
# sthalles/PyTorch-BYOL main.py -> trainer.py BYOLTrainer (a sibling module): main builds the online network (ResNet18 +
# projection MLP), the predictor MLP and a target network, ONE SGD optimizer over online + predictor parameters, and hands
# them to BYOLTrainer, whose train(train_dataset) builds the DataLoader itself (shuffle, drop_last=False), copies the online
# parameters into the target network (initializes_target_network), runs the online network twice per step (two views)
# before one backward, updates the target by a momentum average of the online parameters (zip of .parameters()), writes a
# tensorboard writer (stub: runs/stub) and copies config/main/trainer into runs/.../checkpoints at __init__
# (exists-then-makedirs), saves model.pth at the end. Config read from the fixed path ./config/config.yaml (rewritten by
# setup(): resnet18 stand-in, mlp 32 -> 16, 32x32 crops, batch 8, 2 epochs, workers 0). STL10 replaced by 48 random
# 32x32 images (shim), seeded torch.manual_seed(0); the views' random blur sigma comes from unseeded numpy.
NAME=byol_main REPO=PyTorch-BYOL SCRIPT=main.py
ARGS=()
export SHIM_N=48
setup() {
  cat > config/config.yaml <<'YAML'
network:
  name: resnet18
  fine_tune_from: 'resnet-18_40-epochs'
  projection_head:
    mlp_hidden_size: 32
    projection_size: 16
data_transforms:
  s: 1
  input_shape: (32,32,3)
trainer:
  batch_size: 8
  m: 0.996
  checkpoint_interval: 5000
  max_epochs: 2
  num_workers: 0
optimizer:
  params:
    lr: 0.03
    momentum: 0.9
    weight_decay: 0.0004
YAML
}
SHOW_FILES="runs/*/checkpoints/*"; CKPTS="runs/*/checkpoints/*.pth"
source "$(dirname "$0")/_common.sh"
