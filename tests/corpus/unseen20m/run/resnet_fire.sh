#!/usr/bin/env bash
# aisolab/cv_implementation Deep_Residual_Learning_for_Image_Recognition/train.py (model/net.py, model/ops.py): a
# python-fire CLI (fire.Fire(main); run/shim/fire.py stands in); main(cfgpath, global_step): hyperparameters from a JSON
# file (batch_size, epochs, lr, the checkpoint path); ResNet50 (the repo's own, model/net.py) .to(device); CIFAR-10
# train loader (shuffle, drop_last, num_workers 4) and val loader (not shuffled); Adam; ReduceLROnPlateau(patience=5)
# stepped on the epoch's val loss; a tensorboardX writer at ./runs/exp; per step: forward, backward, step, and
# whenever (epoch * len(tr_dl) + step) % global_step == 0 an evaluation over the WHOLE val loader mid-epoch
# (writer.add_scalars) then model.train(); per epoch (for ... else) the mean train loss, a whole-val evaluation,
# scheduler.step(val_loss), a tqdm.write line; after the loop one torch.save of {'epoch', 'model_state_dict'} to the
# configured path.
# Data: CIFAR-10 stand-in SHIM_N=32 (4 steps of 8 an epoch, drop_last; val 16). setup writes experiments/tiny.json
# (epochs 2, batch_size 8, lr 1e-3, ckpt checkpoint/ckpt.tar) and makes checkpoint/ (the repo ships no such folder).
# Run: --cfgpath experiments/tiny.json --global_step 3.
NAME=resnet_fire REPO=cv_implementation SUBDIR=Deep_Residual_Learning_for_Image_Recognition SCRIPT=train.py
ARGS=(--cfgpath experiments/tiny.json --global_step 3)
export SHIM_N=32
setup() {
  mkdir -p checkpoint
  cat > experiments/tiny.json <<'JEOF'
{"model": {"num_classes": 10}, "training": {"epochs": 2, "batch_size": 8, "learning_rate": 1e-3},
 "filepath": {"ckpt": "checkpoint/ckpt.tar"}}
JEOF
}
SHOW_FILES="checkpoint/*"; CKPTS="checkpoint/ckpt.tar"
source "$(dirname "$0")/_common.sh"
