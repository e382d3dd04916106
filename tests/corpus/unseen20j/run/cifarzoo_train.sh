#!/usr/bin/env bash
# BIGBALLON/CIFAR-ZOO train.py: --work-path holds config.yaml; a module-level Logger (utils.py: FileHandler
# work-path/log.txt + console); main(): SummaryWriter(work-path/event), yaml.load(f) (no Loader: CORPUS_OLD_YAML),
# EasyDict config, the model by name (models/__init__.py get_model: globals()[config.architecture]), DataParallel + cudnn
# when use_gpu, SGD; the loaders from a sibling helper (utils.get_data_loader: train shuffle, test not); per epoch
# adjust_learning_rate (STEP), train() (mixup_data: np.random.beta + torch.randperm, never seeded), test() every
# eval_freq (whole test set, checkpoint state_dict + best copy via utils.save_checkpoint / shutil.copyfile, best_prec
# from the test accuracy). No seed anywhere.
# Run (setup writes the work path): lenet, cifar10, use_gpu False (the config's device switch; no GPU here), 3 epochs,
# batch 8, test batch 8, eval every epoch, mixup on (alpha 0.4). CIFAR10 stand-in: 32 train / 16 test images.
NAME=cifarzoo_train REPO=CIFAR-ZOO SCRIPT=train.py
ARGS=(--work-path ./experiments/tiny)
export SHIM_N=32 CORPUS_OLD_YAML=1
setup() {
  mkdir -p experiments/tiny
  sed -e 's/^use_gpu: True/use_gpu: False/' -e 's/^epochs: 250/epochs: 3/' -e 's/^batch_size: 128/batch_size: 8/' \
      -e 's/^test_batch: 200/test_batch: 8/' -e 's/^eval_freq: 2/eval_freq: 1/' -e 's/^workers: 4/workers: 0/' \
      -e 's/^mixup: False/mixup: True/' experiments/cifar10/lenet/config.yaml > experiments/tiny/config.yaml
}
SHOW_FILES="experiments/tiny/*"; CKPTS="experiments/tiny/lenet.pth.tar experiments/tiny/lenet_best.pth.tar"
source "$(dirname "$0")/_common.sh"
