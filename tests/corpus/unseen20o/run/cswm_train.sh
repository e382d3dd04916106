#!/usr/bin/env bash
# tkipf/c-swm train.py (modules.py, utils.py): a module-level script; argparse; exp_name = datetime.now().isoformat() (to
# the MICROSECOND) when --name is 'none', save_folder checkpoints/<exp_name>/ (exists test + makedirs), np / torch seeded
# (--seed 42, every rank alike); logging to save_folder/log.txt (a FileHandler, 'a') and `print = logger.info`;
# metadata.pkl pickled; the dataset (utils.StateTransitionsDataset: an HDF5 replay buffer of (obs, action, next_obs)) and a
# shuffled loader (num_workers 4); ONE batch drawn with train_loader.__iter__().next() to read the input shape; the model
# ContrastiveSWM (an object extractor CNN with BatchNorm, an object encoder MLP, a transition GNN) .apply(weights_init);
# Adam; with --decoder a SECOND model chosen by if/elif on --encoder and its own Adam (not in this run); training calls
# model.contrastive_loss(*batch) - a METHOD, NOT forward - (obj_extractor, obj_encoder, transition_model, a negative
# batch from np.random.permutation(batch_size) of the same batch, hinge energy), one backward, one step; prints every
# log_interval through the logger; per epoch avg_loss = train_loss / len(dataset) and when it beats best_loss
# torch.save(model.state_dict(), model.pt).
# Data (setup): data/tiny.h5 (the h5py stand-in reads a pickle): 2 episodes x 16 steps of 3x50x50 observations, actions in
# [0, 20). Run: --dataset data/tiny.h5 --batch-size 8 --epochs 2 --hidden-dim 32 --log-interval 2 (4 steps an epoch).
# CORPUS_LOADER_NEXT=1 (the iterator's .next()).
NAME=cswm_train REPO=c-swm SCRIPT=train.py
ARGS=(--dataset data/tiny.h5 --batch-size 8 --epochs 2 --hidden-dim 32 --log-interval 2)
export CORPUS_LOADER_NEXT=1
SHOW_FILES="checkpoints checkpoints/*"; CKPTS="checkpoints/*/model.pt"
setup() {
  "$PY" - <<'PY'
import os, pickle, numpy as np
rng = np.random.RandomState(0)
os.makedirs("data", exist_ok=True)
d = {}
for ep in range(2):
    obs = rng.rand(17, 3, 50, 50).astype(np.float32)
    d[str(ep)] = {"obs": obs[:-1], "action": rng.randint(0, 20, size=16).astype(np.int64), "next_obs": obs[1:]}
pickle.dump(d, open("data/tiny.h5", "wb"))
PY
}
source "$(dirname "$0")/_common.sh"
