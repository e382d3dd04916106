#!/usr/bin/env bash
# salesforce/awd-lstm-lm main.py (model.py, data.py, utils.py, splitcross.py, weight_drop.py, locked_dropout.py,
# embed_regularize.py): a module-level script; argparse; np / torch seeded --seed on every rank; NO DataLoader: the
# corpus (data.Corpus, cached with torch.save to corpus.<md5>.data after an exists test) is BATCHIFIED into
# args.batch_size columns (utils.batchify: the batch size sizes the data layout) and walked by get_batch with a RANDOM
# sequence length per step (np.random: bptt or bptt/2, then a normal draw) - the number of steps per epoch depends on
# those draws; RNNModel (tied weights, a ModuleList of LSTMs); SplitCrossEntropyLoss (a second nn.Module, parameters only
# with splits) called with model.decoder.weight / model.decoder.bias; params = model + criterion parameters; train() reads
# globals, hidden = model.init_hidden(args.batch_size) (batch-sized state), per-step lr scaling by seq_len, clip, step;
# evaluate(val_data) each epoch; best val -> model_save(args.save) pickles the WHOLE [model, criterion, optimizer];
# --save defaults to <time.time()>.pt (a per-process name); an SGD -> ASGD switch on a non-monotone val trigger (the
# optimizer is rebuilt over model.parameters() only), the averaged params swapped in for validation; at the end
# model_load(args.save) reloads the best whole model into the globals and evaluates the test data (batch 1).
# Data (setup): data/tiny/{train,valid,test}.txt random words from a 50-word vocabulary (train 400 lines of 6 words).
# Run: --data data/tiny --epochs 3 --batch_size 8 --bptt 10 --emsize 16 --nhid 32 --nlayers 2 --wdrop 0 --log-interval 5
# --save best.pt --nonmono 1 (the ASGD switch can trigger in 3 epochs). CORPUS_TORCH_LOAD_FULL=1 (torch.load of a whole
# pickled module, as torch < 2.6 did).
NAME=awd_lstm REPO=awd-lstm-lm SCRIPT=main.py
export CORPUS_TORCH_LOAD_FULL=1
ARGS=(--data data/tiny --epochs 3 --batch_size 8 --bptt 10 --emsize 16 --nhid 32 --nlayers 2 --wdrop 0 --log-interval 5 --save best.pt --nonmono 1)
SHOW_FILES="*.pt corpus.*.data"; CKPTS=""
setup() {
  "$PY" - <<'PY'
import os, random
r = random.Random(0)
vocab = ["w%d" % i for i in range(50)]
os.makedirs("data/tiny", exist_ok=True)
for split, n in (("train", 400), ("valid", 60), ("test", 40)):
    with open("data/tiny/%s.txt" % split, "w") as f:
        for _ in range(n):
            f.write(" ".join(r.choice(vocab) for _ in range(6)) + "\n")
PY
}
source "$(dirname "$0")/_common.sh"
