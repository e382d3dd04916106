#!/usr/bin/env bash
# proffsenya/pneumonia_classification train.py (models/__init__.py, utils/train_utils.py): main(): the dataset folder
# from kagglehub.dataset_download (run/shim/kagglehub.py: $KAGGLEHUB_DIR); ImageFolder train / test; loaders with a
# HARD-CODED batch_size=32 (train shuffle, test not, num_workers 0); device 'cuda' if available; get_model('vgg11')
# (models/: an if/else on the name, torchvision vgg11(pretrained=True) with classifier[6] replaced) .to(device); Adam;
# train_model(model, {'train': train_loader, 'val': test_loader}, ...) in the sibling utils/train_utils.py: the model
# trained in another module's function, the loaders in a DICT KEYED BY PHASE (`for phase in ['train', 'val']`,
# model.train()/eval(), torch.set_grad_enabled(phase == 'train'), backward/step only in 'train'), running sums over the
# phase's batches, best_model_wts = copy.deepcopy(model.state_dict()) and torch.save(model.state_dict(), save_path) on a
# better val accuracy, model.load_state_dict(best_model_wts) at the end; num_epochs=1 hard-coded; back in main():
# model.load_state_dict(torch.load(best_model_path)) - a RELOAD of the file just written - and test_model over the
# whole test loader (sklearn precision / recall / F1 printed).
# Data (setup): kaggle/train/{NORMAL,PNEUMONIA} 32 + 32 images 32x32x3, kaggle/test/{NORMAL,PNEUMONIA} 8 + 8 (.npy
# arrays under .jpeg names, read by the PIL stand-in): 2 train steps of 32; test 16 (resized to 224).
# Shims: torchvision vgg11 at 1/8 width (the 4096-wide classifier kept), RandomErasing identity, sklearn precision /
# recall / f1.
# Run: python train.py (no arguments: everything is hard-coded).
NAME=pneumonia_train REPO=pneumonia_classification SCRIPT=train.py
ARGS=()
setup() {
  export KAGGLEHUB_DIR="$PWD/kaggle"
  "$PY" - <<'PYEOF'
import os
import numpy as np
rng = np.random.RandomState(0)
for split, n in (("train", 32), ("test", 8)):
    for c in ("NORMAL", "PNEUMONIA"):
        d = os.path.join("kaggle", split, c)
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            with open(os.path.join(d, "img%03d.jpeg" % i), "wb") as f:
                np.save(f, rng.randint(0, 256, size=(32, 32, 3)).astype(np.uint8))
PYEOF
}
SHOW_FILES="best_vgg11.pth"; CKPTS="best_vgg11.pth"
source "$(dirname "$0")/_common.sh"
