#!/usr/bin/env bash
# carpedm20/DiscoGAN-pytorch main.py (trainer.py, models.py, data_loader.py, utils.py, config.py): main(config):
# prepare_dirs_and_logger (model_dir = logs/<dataset>_<datetime.now() to the second> - a TIMESTAMPED folder, made with
# an exists test + makedirs), torch.manual_seed(random_seed) (every rank the same init and the same shuffles),
# get_loader in the sibling data_loader.py (TWO shuffled loaders, domain A and B, with .shape attributes), then a
# Trainer CLASS: build_model() makes FOUR models (G_AB, G_BA, D_A, D_B; an if/elif on cnn_type for their widths),
# .cuda() each when num_gpu == 1 (DataParallel when > 1); save_config writes params.json; Trainer.train(): two Adam
# optimizers over chain(D_A, D_B) and chain(G_AB, G_BA); real/fake label tensors sized --batch_size then resized to
# each batch; both loaders' iterators RESTARTED together on StopIteration (`.next()`), a step skipped when A and B
# batches differ in size; D step (four D forwards of G outputs detached), G step (G_AB/G_BA cycle + D forwards);
# every log_step prints (.data[0]) and generate_with_A/B write PNGs of the fixed first batches; every save_step the
# four state dicts saved as G_AB_<step>.pth etc.
# Data: 64x64 RGB npy images data/tiny/A (24) and B (24): 3 steps of 8, iterators restarted at step 3.
# Run: --dataset tiny --batch_size 8 --max_step 6 --log_step 3 --save_step 3 --cnn_type 1 --num_worker 0 --num_gpu 1.
# CORPUS_LOADER_NEXT=1, CORPUS_ZERO_DIM_INDEX=1, CORPUS_BCE_SIZE=1 (old-torch behaviours the repo relies on).
NAME=discogan_carpedm20 REPO=DiscoGAN-pytorch SCRIPT=main.py
ARGS=(--dataset tiny --batch_size 8 --max_step 6 --log_step 3 --save_step 3 --cnn_type 1 --num_worker 0 --num_gpu 1)
export CORPUS_LOADER_NEXT=1 CORPUS_ZERO_DIM_INDEX=1 CORPUS_BCE_SIZE=1
SHOW_FILES="logs logs/*"; CKPTS="logs/tiny_*/G_AB_5.pth logs/tiny_*/D_A_5.pth"
setup() {
  "$PY" - <<'PY'
import os, numpy as np
for d, seed in (("A", 0), ("B", 1)):
    rng = np.random.RandomState(seed)
    os.makedirs("data/tiny/" + d, exist_ok=True)
    for i in range(24):
        np.save(open("data/tiny/%s/%d.png" % (d, i), "wb"), rng.randint(0, 256, size=(64, 64, 3)).astype(np.uint8))
PY
}
source "$(dirname "$0")/_common.sh"
