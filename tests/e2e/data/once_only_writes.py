"""A single-process script that logs like real ones do: a CSV log created by a ``with open``
block and appended to every epoch, a text log handle kept open, progress lines on stdout, and
the whole model pickled through a file handle. Converted and run on 2 ranks, each log line
must appear once, and the pickle must hold the plain module."""
import argparse
import csv
import os
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--out-dir", default=".")
args = parser.parse_args()

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
train_loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=16, shuffle=True)
csv_path = os.path.join(args.out_dir, "log.csv")
with open(csv_path, "w") as log_file:
    csv.writer(log_file).writerow(["epoch", "loss"])
history = open(os.path.join(args.out_dir, "history.txt"), "a")
for epoch in range(args.epochs):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        sys.stdout.write("progress-line epoch %d\n" % epoch)
    with open(csv_path, "a") as log_file:
        writer = csv.writer(log_file)
        writer.writerow([epoch, loss.item()])
    history.write("epoch %d\n" % epoch)
history.close()
with open(os.path.join(args.out_dir, "model.pt"), "wb") as handle:
    torch.save(model, handle)
