# Regression on a synthetic 1-D signal dataset.
# Old-style script: everything runs at module level, multi-GPU via nn.DataParallel.
#
#   python train.py --epochs 20 --batch-size 64 --out-dir checkpoints
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm
import ddpify.runtime as ddpify

ddpify.setup()

parser = argparse.ArgumentParser(description="MLP regression on a synthetic signal")
parser.add_argument("--epochs", type=int, default=10, help="number of epochs to train")
parser.add_argument("--batch-size", type=int, default=64, help="input batch size for training")
parser.add_argument("--lr", type=float, default=1e-3, help="learning rate")
parser.add_argument("--out-dir", type=str, default=".", help="where to save the model")
args = parser.parse_args()

# reproducibility
ddpify.seed(torch.manual_seed, 0)
ddpify.seed(np.random.seed, 0)
ddpify.seed(random.seed, 0)

use_cuda = torch.cuda.is_available()

# ---- data: y = sum of a few sines of the inputs + noise ----
N_SAMPLES = 2048
N_FEATURES = 32
X = np.random.randn(N_SAMPLES, N_FEATURES).astype(np.float32)
freqs = np.random.uniform(0.5, 2.0, size=N_FEATURES).astype(np.float32)
y = np.sin(X * freqs).sum(axis=1, keepdims=True) / np.sqrt(N_FEATURES)
y = (y + 0.05 * np.random.randn(N_SAMPLES, 1)).astype(np.float32)

train_dataset = TensorDataset(torch.from_numpy(X), torch.from_numpy(y))
train_loader = ddpify.distributed_loader(train_dataset, batch_size=args.batch_size, shuffle=True)

# ---- model ----
model = nn.Sequential(
    nn.Linear(N_FEATURES, 128),
    nn.ReLU(),
    nn.Linear(128, 128),
    nn.ReLU(),
    nn.Linear(128, 1),
)
if use_cuda:
    model = model.to(ddpify.device())
if torch.cuda.device_count() > 1:
    ddpify.print("Using", torch.cuda.device_count(), "GPUs")

criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
model = ddpify.prepare_model(model)

# ---- training ----
for epoch in range(args.epochs):
    ddpify.set_epoch(train_loader, epoch)
    model.train()
    epoch_loss = 0.0
    pbar = tqdm(train_loader, desc="Epoch %d" % epoch, disable=not ddpify.is_main_process())
    for inputs, targets in pbar:
        if use_cuda:
            inputs, targets = inputs.to(ddpify.device()), targets.to(ddpify.device())
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        pbar.set_postfix(loss="%.4f" % loss.item())
    ddpify.print("Epoch %d: average loss %.4f" % (epoch, ddpify.mean_over_ranks(epoch_loss / len(train_loader))))

os.makedirs(args.out_dir, exist_ok=True)
# unwrap DataParallel so the checkpoint loads into a plain model
state_dict = ddpify.unwrap(model).state_dict() if isinstance(model, nn.DataParallel) else ddpify.unwrap(model).state_dict()
ddpify.save(state_dict, os.path.join(args.out_dir, "model_final.pth"))
ddpify.print("Saved model to", os.path.join(args.out_dir, "model_final.pth"))
