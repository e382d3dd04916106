#!/usr/bin/env bash
# clovaai/stargan-v2 main.py -> core/solver.py Solver (an nn.Module of a sibling package): core/model.build_model makes
# four nets (generator, mapping_network, style_encoder, discriminator), each inside nn.DataParallel, and their EMA copies
# (copy.deepcopy, three nets); Solver.__init__ makes one Adam per net (Munch of optimizers), three CheckpointIO objects
# (save module.module.state_dict(); os.makedirs exist_ok) and he_init; Solver.train(loaders) wraps two train loaders
# (WeightedRandomSampler over ImageFolder / ReferenceDataset, drop_last) and a val loader in InputFetcher iterators that
# re-iterate on StopIteration and draw z codes sized by the batch; per step two D updates (R1 penalty by autograd.grad
# with create_graph) and two G updates (the generator three times per loss), moving_average of three nets into the EMA
# nets, lambda_ds decayed in args, debug images from the EMA nets, checkpoints every save_every. Data: 2 domains x 4
# train / 2 val random 32x32 images written by setup() as .npy files named .jpg (the PIL stand-in opens them); --w_hpf 0
# (no FAN/wing checkpoint needed), 2 iterations, batch 2, images and checkpoints at iteration 2.
NAME=stargan_main REPO=stargan-v2 SCRIPT=main.py
ARGS=(--mode train --num_domains 2 --w_hpf 0 --img_size 32 --batch_size 2 --val_batch_size 2 --total_iters 2
      --print_every 1 --sample_every 2 --save_every 2 --eval_every 100000 --num_workers 0 --num_outs_per_domain 1
      --ds_iter 100 --train_img_dir data/afhq/train --val_img_dir data/afhq/val --sample_dir expr/samples
      --checkpoint_dir expr/checkpoints --seed 777)
setup() {
  "$PY" - <<'PYEOF'
import os, numpy as np
rng = np.random.RandomState(0)
for split, n in (("train", 4), ("val", 2)):
    for dom in ("cat", "dog"):
        d = "data/afhq/%s/%s" % (split, dom)
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            with open("%s/%d.jpg" % (d, i), "wb") as f:
                np.save(f, rng.randint(0, 256, (32, 32, 3)).astype(np.uint8))
PYEOF
}
SHOW_FILES="expr/samples/* expr/checkpoints/*"; CKPTS="expr/checkpoints/*.ckpt"
source "$(dirname "$0")/_common.sh"
