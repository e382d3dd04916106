#!/usr/bin/env bash
# tanelp/tiny-diffusion ddpm.py: 3 epochs on 512 synthetic 2-D points (a stand-in `datasets` module
# written here), tiny MLP. ARGS overrides the defaults (e.g. --save_images_step 2).
NAME=tanelp_tiny_diffusion
source "$(dirname "$0")/_common.sh"
export CORPUS_STUBS=mpl
cp "$SUPPORT/tanelp/positional_embeddings.py" .
cat > datasets.py <<'PY'
# harness stand-in for tiny-diffusion's datasets.py: deterministic points, identical in every process
import numpy as np
import torch
from torch.utils.data import TensorDataset

def get_dataset(name, n=512):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    return TensorDataset(torch.from_numpy(x))
PY
$RUNNER "$SCRIPT" --num_epochs 3 --train_batch_size 32 --eval_batch_size 64 --num_timesteps 10 \
    --hidden_size 32 --hidden_layers 1 --embedding_size 16 ${ARGS:-}
test -f exps/base/model.pth
check
