#!/usr/bin/env bash
# WickedFoxes/simple_task_pytorch train.py (src/registry.py, src/datasets/cifar10.py, src/models/resnetv2.py,
# src/trainer/classifer_trainer.py, src/hook/{checkpoint_saver,early_stopping}.py, src/utils/checkpoint.py,
# src/aug/batch/mixup.py, src/scheduler/scheduler.py, src/logger/simple_logger.py): EVERYTHING is built through a
# string REGISTRY (src.registry.build(kind, name, **cfg)) from an OmegaConf yaml: the transforms, a batch augmentation
# (mixup: random.random() and torch.randperm / Beta draws per batch), the loaders (a registered FUNCTION in a sibling
# module returning (train_loader, val_loader), shuffle=True / False), the model (a registered class), the optimizer,
# the scheduler (ReduceLROnPlateau here), the logger (print-based), the trainer (a CLASS: ClassifierTrainer.train()
# runs the loop - training is a METHOD of a registry-built object, the model held as self.model), the loss;
# set_seed(cfg.seed) seeds random / numpy / torch alike; device = cfg.device if cuda else "cpu"; AMP (torch.cuda.amp
# autocast + GradScaler(enabled=cfg.amp)) with unscale_ + clip_grad_norm_; HOOKS: CheckpointSaver (best.ckpt when
# val acc improves, last.ckpt at every log_step via on_step_end, os.makedirs(exist_ok=True) in save) and EarlyStopping
# (NOT configured in the run: the original crashes at the end with it - Hook.on_train_end() takes no arguments but
# the trainer passes four); scheduler.step(val_loss) (ReduceLROnPlateau, decided from this process.s val loss).
# Data: the torchvision CIFAR10 stand-in (SHIM_N=32 train / 16 val random images). setup() writes configs/corpus.yaml.
# Run: --cfg configs/corpus.yaml (resnet_mini_v2_14, batch 8, 3 epochs, plateau patience 0)
NAME=simple_cls REPO=simple_task_pytorch SCRIPT=train.py
ARGS=(--cfg configs/corpus.yaml)
export SHIM_N=32
EXTRA_SHIM=/work/corpus-unseen20r/_deps
SHOW_FILES="ckpt ckpt/*"; CKPTS="ckpt/best.ckpt ckpt/last.ckpt"
setup() {
  cat > configs/corpus.yaml <<'YAML'
seed: 42
device: "cuda"
dataset: {name: "cifar10", root: "./data/cifar10", num_workers: 0, batch_size: 8, pin_memory: false, download: false}
model: {name: "resnet_mini_v2_14", num_classes: 10}
optimizer: {name: "sgd", lr: 0.05, weight_decay: 0.0005}
scheduler: {name: "reduce_lr_on_plateau", mode: "min", factor: 0.5, patience: 0}
augment:
  train:
    - {name: "RandomCrop", size: 32, padding: 4}
    - {name: "RandomHorizontalFlip", p: 0.5}
    - {name: "ToTensor"}
    - {name: "Normalize", mean: [0.49, 0.48, 0.45], std: [0.25, 0.24, 0.26]}
  eval:
    - {name: "ToTensor"}
    - {name: "Normalize", mean: [0.49, 0.48, 0.45], std: [0.25, 0.24, 0.26]}
batch_aug: {name: "mixup", alpha: 0.2, p: 1.0, num_classes: 10}
loss: {name: "soft_target"}
logger: {name: "simple"}
trainer: {name: "classifier_trainer", epochs: 3, grad_clip: 1.0, amp: true, log_step: 2}
checkpoint_saver: {save_dir: "ckpt", save_best: true, save_last: true}
YAML
}
source "$(dirname "$0")/_common.sh"
