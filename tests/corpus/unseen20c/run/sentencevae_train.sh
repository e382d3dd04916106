#!/usr/bin/env bash
# timbmg/Sentence-VAE train.py: PTB replaced by 48 train / 16 valid random sentences over a 30-word vocabulary,
# preprocessed once by setup (ptb.py with create_data, nltk tokenizer shimmed to str.split); small GRU VAE,
# 2 epochs of batch 8. Loaders are built inside the epoch loop, one per split (shuffle=split=='train').
NAME=sentencevae_train REPO=Sentence-VAE SCRIPT=train.py
ARGS=(-ep 2 -bs 8 -eb 16 -hs 16 -ls 4 --max_sequence_length 20 -v 2)
setup() {
  "$PY" - <<'PY'
import os, random
os.makedirs("data", exist_ok=True)
r = random.Random(0); words = ["w%d" % i for i in range(30)]
for split, n in (("train", 48), ("valid", 16)):
    with open("data/ptb.%s.txt" % split, "w") as f:
        for _ in range(n): f.write(" ".join(r.choice(words) for _ in range(r.randint(3, 12))) + "\n")
from ptb import PTB
for split in ("train", "valid"): PTB(data_dir="data", split=split, create_data=True, max_sequence_length=20, min_occ=1)
PY
}
SHOW_FILES="bin dumps"; CKPTS="bin/*/*.pytorch"
source "$(dirname "$0")/_common.sh"
