#!/usr/bin/env bash
# 649453932/Chinese-Text-Classification-Pytorch run.py: model by import_module('models.' + name) (TextCNN), training in
# train_eval.py train() (sibling module), batches from utils.DatasetIterater (a custom iterator, no DataLoader),
# dev evaluation every 100 steps decides the best save and the early stop, test() reloads the saved file.
# THUCNews train.txt is not in the snapshot (> 4 MiB): setup writes 256 train / 128 dev / 128 test lines of 10-32
# characters from the repo's vocab.pkl (10 classes, class.txt of the repo). Config is hard-coded (20 epochs, batch 128,
# so 2 batches an epoch = 40 steps); random embeddings (the SougouNews .npz is not in the snapshot).
NAME=textcls_run REPO=Chinese-Text-Classification-Pytorch SCRIPT=run.py
ARGS=(--model TextCNN --embedding random)
setup() {
  "$PY" - <<'PY'
import pickle, random
vocab = [w for w in pickle.load(open("THUCNews/data/vocab.pkl", "rb")) if w not in ("<UNK>", "<PAD>")]
r = random.Random(0)
for split, n in (("train", 256), ("dev", 128), ("test", 128)):
    with open("THUCNews/data/%s.txt" % split, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write("".join(r.choice(vocab[:500]) for _ in range(r.randint(10, 32))) + "\t%d\n" % r.randrange(10))
PY
}
SHOW_FILES="THUCNews/saved_dict"; CKPTS="THUCNews/saved_dict/TextCNN.ckpt"
source "$(dirname "$0")/_common.sh"
