#!/usr/bin/env bash
# jvanvugt/pytorch-domain-adaptation train_source.py: argparse under __main__, main(args); device 'cuda' if available
# (module level); create_dataloaders(): MNIST (GrayscaleToRgb + ToTensor), an UNSEEDED train/val split
# (np.random.permutation(len(dataset)), 80/20, nothing seeds numpy or torch anywhere), train and val loaders over the
# SAME dataset with SubsetRandomSampler(train_idx) (drop_last) / SubsetRandomSampler(val_idx); Net (models.py) + Adam;
# ReduceLROnPlateau(patience=1, verbose=True) stepped on the val loss; do_epoch() trains (optim given) or evaluates
# (optim None, under no_grad), returning mean loss / accuracy over the batches; best checkpoint on the val accuracy
# (torch.save of model.state_dict() to trained_models/source.pt, a folder in the repo).
# Data: MNIST stand-in SHIM_N=80 (the stand-in ignores config.DATA_DIR, a hard-coded /home/joris/data): 64 train rows
# (8 batches of 8) and 16 val rows. Run: --batch-size 8 --epochs 3. CORPUS_PLATEAU_VERBOSE=1 (run/shim/sitecustomize.py):
# the torch here has no verbose= keyword on ReduceLROnPlateau; the stand-in drops it.
NAME=source_mnist REPO=pytorch-domain-adaptation SCRIPT=train_source.py
ARGS=(--batch-size 8 --epochs 3)
export SHIM_N=80 CORPUS_PLATEAU_VERBOSE=1
SHOW_FILES="trained_models/*"; CKPTS="trained_models/source.pt"
source "$(dirname "$0")/_common.sh"
