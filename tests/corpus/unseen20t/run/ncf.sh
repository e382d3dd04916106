#!/usr/bin/env bash
# guoyang9/NCF main.py (config.py, data_utils.py, model.py, evaluate.py): a MODULE-LEVEL script; argparse, then
# os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu (default "0"); data_utils.load_all() reads the ratings (pandas
# read_csv + a scipy dok_matrix) from config.main_path; NCFData train set whose NEGATIVES are redrawn every epoch by
# train_loader.dataset.ng_sample() (numpy, unseeded) before the loop; train loader shuffle=True, num_workers=4; test
# loader shuffle=False with batch_size = test_num_ng + 1 = ONE USER per batch (evaluate.metrics takes top-k within the
# batch); the model variant picked by the string config.model (NeuMF-end here; NeuMF-pre would load two whole pickled
# models); model.cuda(); torch UNSEEDED; evaluate.metrics runs the model with grad (no no_grad) over the whole test set;
# the best HR saves the WHOLE model object with torch.save(model, './models/NeuMF-end.pth').
# Data (setup()): 20 users x 5 positive items over 40 items (data/ml-1m.train.rating) and data/ml-1m.test.negative with
# one held-out positive and 9 negatives per user; config.py's absolute main_path '/home/share/...' is pointed at ./data/
# by sed in the scratch copy (config.py is a constants module, not the converted script; same for every mode).
# Run: --batch_size 50 --epochs 3 --top_k 3 --factor_num 8 --num_layers 2 --num_ng 4 --test_num_ng 9
#      (100 positives x 5 = 500 train rows, 10 batches an epoch in one process; 20 test batches of 10)
NAME=ncf REPO=NCF SCRIPT=main.py
ARGS=(--batch_size 50 --epochs 3 --top_k 3 --factor_num 8 --num_layers 2 --num_ng 4 --test_num_ng 9)
SHOW_FILES="models models/*"; CKPTS="models/*.pth"
export CORPUS_TORCH_LOAD_FULL=1
setup() {
  sed -i "s#^main_path = .*#main_path = './data/'#" config.py
  "$PY" - <<'PY'
import os, numpy as np
r = np.random.RandomState(5)
os.makedirs("data", exist_ok=True)
tr, te = [], []
for u in range(20):
    items = r.choice(40, size=7, replace=False)
    for i in items[:5]:
        tr.append("%d\t%d\t5\t978300760" % (u, i))
    pos = int(items[5])
    negs = [int(j) for j in r.permutation(40) if j not in items][:9]
    te.append("(%d,%d)\t" % (u, pos) + "\t".join(map(str, negs)))
open("data/ml-1m.train.rating", "w").write("\n".join(tr) + "\n")
open("data/ml-1m.test.negative", "w").write("\n".join(te) + "\n")
PY
}
source "$(dirname "$0")/_common.sh"
