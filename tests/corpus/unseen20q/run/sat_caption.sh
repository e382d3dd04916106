#!/usr/bin/env bash
# AaronCCWong/Show-Attend-and-Tell train.py (encoder.py, decoder.py, attention.py, dataset.py, utils.py): main() builds
# TWO models - an Encoder (a pretrained CNN chosen by if/elif on --network, NEVER trained: no optimizer, eval() in
# train and validate) and the attention-LSTM Decoder (the only trained model, Adam over decoder.parameters()) - and
# trains in a SEPARATE train() function (validate() likewise); StepLR stepped BEFORE train each epoch; --model loads a
# decoder state dict before .cuda(); the decoder's forward makes batch-sized tensors with a hard .cuda()
# (prev_words, preds, alphas) and, without --tf, feeds back its own argmax; pack_padded_sequence of preds/targets;
# train and val loaders (both shuffle=True, num_workers=1) over ImageCaptionDataset (sibling dataset.py, json lists);
# validate computes loss / top-k / corpus BLEU (nltk) over the whole val set; one tensorboardX SummaryWriter() (default
# runs/<date>_<host> folder) with per-epoch scalars; torch.save(decoder.state_dict()) to model/model_<net>_<epoch>.pth
# every epoch; NO seeding at all (decoder init, shuffles, dropout per process).
# Data: setup() writes 32 train + 8 val 32x32x3 uint8 .npy images (PIL stand-in), captions of 8 tokens over a
# 20-word dictionary, and data/tiny/{word_dict,train_img_paths,train_captions,val_img_paths,val_captions}.json.
# Run: --batch-size 8 --epochs 2 --log-interval 1 --data data/tiny --network resnet152 --step-size 1
NAME=sat_caption REPO=Show-Attend-and-Tell SCRIPT=train.py
ARGS=(--batch-size 8 --epochs 2 --log-interval 1 --data data/tiny --network resnet152 --step-size 1)
SHOW_FILES="model/* runs runs/*"; CKPTS="model/model_resnet152_2.pth"
setup() {
  "$PY" - <<'PY'
import json, os, numpy as np
r = np.random.RandomState(4); os.makedirs("data/tiny/imgs", exist_ok=True)
wd = {"<start>": 0, "<eos>": 1, "<unk>": 2, "<pad>": 3}
for i in range(16): wd["w%d" % i] = 4 + i
json.dump(wd, open("data/tiny/word_dict.json", "w"))
for split, n in (("train", 32), ("val", 8)):
    paths, caps = [], []
    for k in range(n):
        p = "data/tiny/imgs/%s_%d.npy" % (split, k); np.save(p, r.randint(0, 255, (32, 32, 3)).astype(np.uint8))
        paths.append(p); caps.append([0] + [int(x) for x in r.randint(4, 20, 6)] + [1])
    json.dump(paths, open("data/tiny/%s_img_paths.json" % split, "w")); json.dump(caps, open("data/tiny/%s_captions.json" % split, "w"))
PY
}
source "$(dirname "$0")/_common.sh"
