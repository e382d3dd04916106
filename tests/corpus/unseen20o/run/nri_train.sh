#!/usr/bin/env bash
# ethanfetaya/NRI train.py (modules.py, utils.py): a module-level script; argparse; np / torch seeded (--seed 42, every
# rank alike); a save folder logs/exp<datetime.isoformat() - to the MICROSECOND> made with os.mkdir (no exists test),
# metadata.pkl pickled and log.txt opened for writing at module level; load_data in the sibling utils.py (three
# UNSHUFFLED loaders: train, valid, test); TWO models chosen by if/elif (--encoder mlp|cnn, --decoder mlp|rnn|sim),
# --load_folder reload, ONE Adam over list(encoder params) + list(decoder params), StepLR (stepped at the top of train());
# train(epoch, best_val_loss) (a function reading the module globals): encoder(data, rel_rec, rel_send) -> Gumbel-softmax
# edges (unseeded draws after the seed) -> decoder(data, edges, ...), NLL + KL, one backward, one step, .data[0] sums;
# then a validation pass inside the same function, the epoch prints, and when the mean val NLL beats best_val_loss the
# two state dicts saved to encoder.pt / decoder.pt and a line written to log.txt; after the loop test() RELOADS
# encoder.pt / decoder.pt (torch.load, no map_location) and evaluates the test loader (teacher-forced, then a 20-step
# rollout), printing to log.txt.
# Data (setup): random springs-like arrays: 5 atoms, train 32 sims x 10 steps, valid 16 x 10, test 16 x 40; edges 0/1.
# Run: --epochs 2 --batch-size 8 --timesteps 10 --prediction-steps 5 --encoder-hidden 32 --decoder-hidden 32 (4 steps an
# epoch). CORPUS_ZERO_DIM_INDEX=1 (loss.data[0]), CORPUS_NUMPY_ALIASES=1 (np.float in utils.edge_accuracy).
NAME=nri_train REPO=NRI SCRIPT=train.py
ARGS=(--epochs 2 --batch-size 8 --timesteps 10 --prediction-steps 5 --encoder-hidden 32 --decoder-hidden 32)
export CORPUS_ZERO_DIM_INDEX=1 CORPUS_NUMPY_ALIASES=1
SHOW_FILES="logs logs/*"; CKPTS="logs/exp*/encoder.pt logs/exp*/decoder.pt"
setup() {
  mkdir -p logs
  "$PY" - <<'PY'
import numpy as np
rng = np.random.RandomState(0)
for split, n, t in (("train", 32, 10), ("valid", 16, 10), ("test", 16, 40)):
    np.save("data/loc_%s_springs5.npy" % split, rng.randn(n, t, 2, 5).astype(np.float32))
    np.save("data/vel_%s_springs5.npy" % split, rng.randn(n, t, 2, 5).astype(np.float32))
    e = rng.randint(0, 2, size=(n, 5, 5))
    np.save("data/edges_%s_springs5.npy" % split, (e * 2 - 1).astype(np.int64))
PY
}
source "$(dirname "$0")/_common.sh"
