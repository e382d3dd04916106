#!/usr/bin/env bash
# chenyuntc/pytorch-book Chapter11/main.py (python-fire entry `train`): the preprocessed poem file data/tang.npz is
# synthesized (16 poems of 12 tokens, vocabulary of 20); visdom/ipdb/torchnet stubbed (shim). 2 epochs, 1 batch each.
NAME=poetry_main REPO=pytorch-book SUBDIR=Chapter11 SCRIPT=main.py
ARGS=(train --use_gpu=False --epoch=2 --batch_size=16 --plot_every=2)
setup() {
  mkdir -p data checkpoints
  "$PY" - <<'PY'
import numpy as np
words = [chr(0x4e00 + i) for i in range(17)] + ['<EOP>', '<START>', '</s>']
word2ix = {w: i for i, w in enumerate(words)}; ix2word = {i: w for w, i in word2ix.items()}
rng = np.random.RandomState(0)
data = rng.randint(0, 17, size=(16, 12)); data[:, 0] = word2ix['<START>']; data[:, -1] = word2ix['<EOP>']
np.savez_compressed('data/tang.npz', data=data, word2ix=word2ix, ix2word=ix2word)
PY
}
SHOW_FILES="checkpoints"; CKPTS="checkpoints/*.pth"
source "$(dirname "$0")/_common.sh"
