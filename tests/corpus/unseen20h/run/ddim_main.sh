#!/usr/bin/env bash
# ermongroup/ddim main.py -> runners/diffusion.py Diffusion (a runner class of a sibling package): the config YAML
# (configs/<name>, written here by setup(): a tiny UNet) becomes a namespace; Diffusion.train() builds the CIFAR10
# datasets by name (datasets/__init__.get_dataset), the DataLoader, the Model (models/diffusion.py) inside
# nn.DataParallel, the optimizer by name (functions/get_optimizer) and an EMAHelper (models/ema.py); the loss comes
# from loss_registry[config.model.type] (functions/losses.py noise_estimation_loss calls the model there); the
# timesteps t are sized by the batch (antithetic n // 2 + 1); a states list [model.state_dict(), optimizer, epoch, step,
# ema] is saved at step 1 and every snapshot_freq to ckpt_<step>.pth and ckpt.pth; main.py makes exp/logs/<doc>,
# dumps config.yml there, logs to a FileHandler stdout.txt and a tensorboard SummaryWriter. Data: CIFAR10 stand-in
# (32 train images). 2 epochs, batch 8, snapshot every 3 steps.
NAME=ddim_main REPO=ddim SCRIPT=main.py
ARGS=(--config tiny.yml --doc tiny --exp exp --ni --seed 1234)
export SHIM_N=32
setup() {
  cat > configs/tiny.yml <<'YEOF'
data:
    dataset: "CIFAR10"
    image_size: 32
    channels: 3
    logit_transform: false
    uniform_dequantization: false
    gaussian_dequantization: false
    random_flip: true
    rescaled: true
    num_workers: 0
model:
    type: "simple"
    in_channels: 3
    out_ch: 3
    ch: 32
    ch_mult: [1, 2]
    num_res_blocks: 1
    attn_resolutions: [16, ]
    dropout: 0.1
    var_type: fixedlarge
    ema_rate: 0.9999
    ema: True
    resamp_with_conv: True
diffusion:
    beta_schedule: linear
    beta_start: 0.0001
    beta_end: 0.02
    num_diffusion_timesteps: 1000
training:
    batch_size: 8
    n_epochs: 2
    n_iters: 5000000
    snapshot_freq: 3
    validation_freq: 2000
sampling:
    batch_size: 8
    last_only: True
optim:
    weight_decay: 0.000
    optimizer: "Adam"
    lr: 0.0002
    beta1: 0.9
    amsgrad: false
    eps: 0.00000001
    grad_clip: 1.0
YEOF
}
SHOW_FILES="exp/logs/tiny/*"; CKPTS="exp/logs/tiny/ckpt.pth"
source "$(dirname "$0")/_common.sh"
