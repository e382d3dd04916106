#!/usr/bin/env bash
# llien30/AnoGAN train.py (model.py, trainer.py, libs/): a module-level script; argparse (config path, --no_wandb); a YAML
# config read into addict.Dict; wandb.init(config=CONFIG) (every rank unless converted); the dataset (libs/dataloader.py:
# a CSV of image paths, PIL) and a shuffled DataLoader at module level; G = NetG, D = NetD built AND initialised
# (weights_init) at module level, wandb.watch on both; then trainer.train(G, D, ...) in the SIBLING module trains them
# (device picked there, two Adam optimizers made there, BCEWithLogits labels torch.full((mini_batch_size,), 1/0) sized
# from the batch, D step then G step with fresh noise), writes fake_imges.png with save_image every epoch and, with wandb,
# reopens that png; it RETURNS G and D, whose state dicts train.py saves (weights/G.prm, D.prm) after makedirs.
# Data: 32 single-channel 16x16 images (npy under .jpg names) listed in csv/tiny.csv; config/tiny.yaml: input_size 16,
# batch 8 (4 steps an epoch), z_dim 8, ngf/ndf 8, 2 epochs. No seed anywhere.
NAME=anogan_llien30 REPO=AnoGAN SCRIPT=train.py
ARGS=(config/tiny.yaml)
export CORPUS_TORCH_FULL_FLOAT=1
SHOW_FILES="weights/* fake_imges.png"; CKPTS="weights/G.prm weights/D.prm"
setup() {
  "$PY" - <<'PY'
import os, numpy as np
rng = np.random.RandomState(0)
os.makedirs("data/train/NORMAL", exist_ok=True)
with open("csv/tiny.csv", "w") as f:
    f.write("img_path,cls_id,cls_label\n")
    for i in range(32):
        p = "./data/train/NORMAL/img_7_%d.jpg" % i
        np.save(open(p, "wb"), rng.randint(0, 256, size=(16, 16)).astype(np.uint8))
        f.write("%s,0,NORMAL\n" % p)
open("config/tiny.yaml", "w").write("""train_csv_file: ./csv/tiny.csv
input_size: 16
batch_size: 8
z_dim: 8
channel: 1
ngf: 8
ndf: 8
extralayer: 0
num_epochs: 2
num_fakeimage: 5
save_dir: ./weights
name: tiny
""")
PY
}
source "$(dirname "$0")/_common.sh"
