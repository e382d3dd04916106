#!/usr/bin/env bash
# jxhe/vae-lagging-encoder text.py (data/text_data.py, modules/ vae.py enc_lstm.py dec_lstm.py, logger.py): main() builds
# an LSTM encoder (if/elif on args.enc_type) and decoder into VAE(encoder, decoder) and trains it through vae.loss(...)
# (a METHOD, not forward); NO DataLoader: MonoTextData.create_data_batch pre-builds length-bucketed batches, visited in
# np.random.permutation order each epoch; hyper-parameters from importlib config.config_<dataset>; numpy / torch seeded
# from seed_set[--taskid] (alike on every rank); TWO SGD optimizers over vae.encoder / vae.decoder; --aggressive 1: an
# inner encoder-only loop (enc_optimizer.step, np.random.random_integers draws another batch) until the loss stops
# falling, then a joint step; calc_mi / calc_au / test() on the val batches (np.random.permutation again); best-val
# torch.save(vae.state_dict()) to models/<dataset>/<id>.pt, an LR-decay on no-improvement that RELOADS that file (epoch
# >= 15) and rebuilds both optimizers; at the end the best file is reloaded, tested, and calc_iwnll runs on batch-1 test
# data; sys.stdout replaced by Logger(log_path) (a file opened 'w') in __main__; makedirs after exists tests.
# Data: setup() writes config/config_tiny.py and 160 / 24 / 24 random 4-9-word sentences over a 30-word vocabulary.
# Run: --dataset tiny --aggressive 1 --iw_nsamples 100
NAME=vae_lagging REPO=vae-lagging-encoder SCRIPT=text.py
ARGS=(--dataset tiny --aggressive 1 --iw_nsamples 100)
SHOW_FILES="models/tiny logs/tiny logs/tiny/*"; CKPTS="models/tiny/tiny_aggressive1_kls1.00_warm10_0_0_783435.pt"
setup() {
  cat > config/config_tiny.py <<'PY'
params={'enc_type': 'lstm', 'dec_type': 'lstm', 'nz': 2, 'ni': 16, 'enc_nh': 16, 'dec_nh': 16,
        'dec_dropout_in': 0.5, 'dec_dropout_out': 0.5, 'epochs': 3, 'batch_size': 8, 'test_nepoch': 1,
        'train_data': 'datasets/tiny/train.txt', 'val_data': 'datasets/tiny/valid.txt', 'test_data': 'datasets/tiny/test.txt'}
PY
  mkdir -p datasets/tiny
  "$PY" - <<'PY'
import random
r = random.Random(5); V = ["w%d" % i for i in range(30)]
for f, n in (("train", 160), ("valid", 24), ("test", 24)):
    with open("datasets/tiny/%s.txt" % f, "w") as o:
        for _ in range(n):
            o.write(" ".join(r.choice(V) for _ in range(r.randint(4, 9))) + "\n")
PY
}
source "$(dirname "$0")/_common.sh"
