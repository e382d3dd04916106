"""A single-process script with values each process of a DDP run would make for itself: a
checkpoint round trip through a temporary folder, a random_split with no seed, a --device
option, a download into a file (a file:// URL, so no network), and the logging module writing
a log file. Converted and run on 2 ranks: the round trip must work (rank 1 loads the file rank 0
wrote), the split must be the same on both ranks, each log line must be in the file once, and
both ranks must read the complete downloaded file."""
import argparse
import json
import logging
import os
import tempfile
import urllib.request
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

parser = argparse.ArgumentParser()
parser.add_argument("--out-dir", required=True)
parser.add_argument("--source", required=True)
parser.add_argument("--device", default="cpu")
args = parser.parse_args()
logging.basicConfig(level=logging.INFO, filename=os.path.join(args.out_dir, "train.log"), format="%(levelname)s %(message)s")
log = logging.getLogger("train")

downloaded = os.path.join(args.out_dir, "downloaded.txt")
urllib.request.urlretrieve(Path(args.source).as_uri(), downloaded)
with open(downloaded) as f:
    lines = len(f.read().splitlines())

full = TensorDataset(torch.arange(40.0).unsqueeze(1), torch.arange(40.0).unsqueeze(1))
train_set, val_set = random_split(full, [32, 8])
model = nn.Linear(1, 1).to(args.device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
loader = DataLoader(train_set, batch_size=8, shuffle=True)
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "model.pt")
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        log.info("epoch %d done", epoch)
        torch.save(model.state_dict(), path)
        model.load_state_dict(torch.load(path))
log.warning("finished")
result = {"val": sorted(int(i) for i in val_set.indices), "scratch": scratch, "lines": lines}
Path(args.out_dir, f"result-{os.environ.get('RANK', '0')}.json").write_text(json.dumps(result))
