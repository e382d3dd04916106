#!/usr/bin/env bash
# chaiyujin/glow-pytorch train.py: docopt CLI `train.py <hparams> <dataset> <dataset_root>`; JsonConfig hparams;
# vision.Datasets dict picks CelebADataset (vision/datasets/celeba.py: images + list_attr_celeba.txt, items are dicts
# {x, y_onehot}); glow/builder.py build(): Glow(hparams), devices from the hparams' Device.glow list (["cuda:0"]:
# get_proper_device falls back to ["cpu"] with no GPU), Adam from a name dict, a noam lr schedule dict; glow/trainer.py
# Trainer: log dir results/<date> + hparams dump + checkpoints dir (os.makedirs after exists), the DataLoader built in
# __init__ (shuffle, drop_last), epochs from num_batches; train(): per-step lr into param_groups, at global_step 0 a
# data-dependent ActNorm initialising forward on the first batch, DataParallel when several devices, nll loss, clip
# grad value + norm, checkpoints via glow/utils.save (graph.module if wrapped; copy to trained.pkg; prune old ones), a
# reverse forward (z -> x) and a sampling forward every plot/inference gap into tensorboardX images. No seed.
# Data (setup): 16 CelebA-layout 20x20 "jpg" images (.npy arrays read by the PIL stand-in) + list_attr_celeba.txt (40
# attributes). Tiny hparams (setup): 16x16x3, K 2, L 2, hidden 16, batch 4, 8 batches (2 epochs), checkpoints every 3
# steps, plots every 3, scalars every step.
NAME=glow_train REPO=glow-pytorch SCRIPT=train.py
ARGS=(../tiny_hparams.json celeba ../celeba_tiny)
export SHIM_N=16
setup() {
  "$PY" - <<'PYEOF'
import json, os
import numpy as np
rng = np.random.RandomState(0)
root = os.path.join("..", "celeba_tiny"); os.makedirs(os.path.join(root, "img"), exist_ok=True)
attrs = ["A%02d" % i for i in range(40)]
lines = ["16", " ".join(attrs)]
for j in range(16):
    name = "%06d.jpg" % j
    with open(os.path.join(root, "img", name), "wb") as f:
        np.save(f, rng.randint(0, 256, size=(20, 20, 3)).astype(np.uint8))
    lines.append(name + " " + " ".join(str(int(v)) for v in rng.choice([-1, 1], size=40)))
open(os.path.join(root, "list_attr_celeba.txt"), "w").write("\n".join(lines) + "\n")
h = json.load(open("hparams/celeba.json"))
h["Dir"]["log_root"] = "results/tiny"
h["Glow"].update(image_shape=[16, 16, 3], hidden_channels=16, K=2, L=2)
h["Data"].update(center_crop=16, resize=16)
h["Optim"]["Schedule"]["args"]["warmup_steps"] = 4
h["Device"] = {"glow": ["cuda:0"], "data": "cuda:0"}
h["Train"].update(batch_size=4, num_batches=8, checkpoints_gap=3, plot_gap=3, inference_gap=3, scalar_log_gap=1,
                  max_checkpoints=2)
json.dump(h, open(os.path.join("..", "tiny_hparams.json"), "w"), indent=2)
PYEOF
}
SHOW_FILES="results/tiny/*/checkpoints/*"
CKPTS="$(echo results/tiny/*/checkpoints/trained.pkg)"
source "$(dirname "$0")/_common.sh"
