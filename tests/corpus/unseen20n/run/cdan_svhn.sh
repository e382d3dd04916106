#!/usr/bin/env bash
# thuml/CDAN pytorch/train_svhnmnist.py (network.py, loss.py, data_list.py; CORPUS_NUMPY_ALIASES=1 for np.float): main() builds everything: argparse,
# torch.manual_seed(--seed) (every rank the same init AND the same shuffles), os.environ["CUDA_VISIBLE_DEVICES"] =
# --gpu_id; THREE shuffled loaders over image lists (source train, target train, target test - the test loader shuffled,
# batch --test_batch_size); model = DTN().cuda() and a SECOND trained model ad_net = AdversarialNetwork (random_layer
# None), two SGD optimizers; train() (a separate function): num_iter = max(len(source), len(target)) and each loader's
# iterator RESTARTED by batch_idx % len (an endless stream per loader, `.next()`), model(torch.cat((source, target)))
# (one forward over a 2B batch: the first B rows labelled), then loss.CDAN in the sibling loss.py runs ad_net on the
# outer product of features and softmax outputs (gradient reversal by register_hook inside ad_net.forward, entropy
# weights with a register_hook, domain targets of [[1]]*B + [[0]]*B sized from the batch), one backward, both steps;
# manual lr decay every 3rd epoch; test() over the whole test loader. No checkpoint.
# Data: 32-pixel RGB npy images: source 32 (4 steps of 8), target 24 (restarted at step 3), test 16.
# Run: CDAN-E --batch_size 8 --test_batch_size 16 --epochs 2 --gpu_id 0 --log_interval 2.
NAME=cdan_svhn REPO=CDAN SUBDIR=pytorch SCRIPT=train_svhnmnist.py
ARGS=(CDAN-E --batch_size 8 --test_batch_size 16 --epochs 2 --gpu_id 0 --log_interval 2)
export CORPUS_LOADER_NEXT=1 CORPUS_NUMPY_ALIASES=1
setup() {
  "$PY" - <<'PY'
import os, numpy as np
os.makedirs("../data/svhn2mnist/img", exist_ok=True)
for name, n, seed in (("svhn_balanced", 32, 0), ("mnist_train", 24, 1), ("mnist_test", 16, 2)):
    rng = np.random.RandomState(seed)
    with open("../data/svhn2mnist/%s.txt" % name, "w") as f:
        for i in range(n):
            p = "../data/svhn2mnist/img/%s_%d.png" % (name, i)
            np.save(open(p, "wb"), rng.randint(0, 256, size=(32, 32, 3)).astype(np.uint8))
            f.write("%s %d\n" % (p, rng.randint(0, 10)))
PY
}
source "$(dirname "$0")/_common.sh"
