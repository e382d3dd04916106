#!/usr/bin/env bash
# kamenbliznashki/spatial_transformer train.py: argparse (--output_dir holding params.json); utils.Params (json);
# output_dir mkdir after an isdir test; tensorboardX writer (utils.set_writer); device cuda:{--cuda}; a fixed
# torch.manual_seed(11052018); train and val loaders from a SIBLING module (data_loader.fetch_dataloader: MNIST, BOTH
# shuffle + drop_last); the model by name (getattr(model, params.stn_module)) - and the module name `model` rebound to
# the instance; initialize(model); Adam with two param groups from model.transformer / model.clf; StepLR;
# train_epoch(): a random perspective transform P = gen_random_perspective_transform(params) sized by params.batch_size
# (vision_transforms.py) fed with each batch to model(x, P); utils.save_checkpoint each epoch (mkdir after an exists
# test + torch.save); evaluate.visualize_sample (save_image + add_image) and evaluate.evaluate (sibling module: whole
# val loader, mean accuracy, mean/var images written with save_image) every epoch.
# Data: MNIST stand-in SHIM_N=128 (train 128 / val 64). Config (setup): experiments/tiny/params.json from
# experiments/base_stn_model/params.json with batch_size 32 (visualize_sample takes the first 20 rows of a
# params.batch_size P: the batch must be >= 20), n_epochs 2, save_summary_steps 2 (4 train / 2 val batches an epoch).
NAME=stn_train REPO=spatial_transformer SCRIPT=train.py
ARGS=(--output_dir experiments/tiny)
export SHIM_N=128
setup() {
  "$PY" - <<'PYEOF'
import json, os
p = json.load(open("experiments/base_stn_model/params.json"))
p.update(batch_size=32, n_epochs=2, save_summary_steps=2)
os.makedirs("experiments/tiny", exist_ok=True)
json.dump(p, open("experiments/tiny/params.json", "w"), indent=4)
PYEOF
}
SHOW_FILES="experiments/tiny/*"; CKPTS="experiments/tiny/state_checkpoint.pt"
source "$(dirname "$0")/_common.sh"
